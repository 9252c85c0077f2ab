import type { RpcFetch } from '../../src/chain/rpc/rpc-fetch.js';

/**
 * Lies the devnet's faults do not tell, told by one endpoint (issue 39): the honest cranks reach
 * their chains through this fetch, which rewrites the answers of the endpoint a lie is on (by
 * origin: a chain's primary or fallback), and passes every other answer as it came.
 * - `inflatedSlots`: every slot the endpoint names (getSlot, getBlockHeight, context slots,
 *   history entries) is INFLATION ahead of the chain;
 * - `forgedNonces`: every nonce account it serves (80 bytes, owned by the System program) holds
 *   a value that never existed, the same one for the same real value at every read;
 * - `replayedHistory`: every later history read of an address (one with `until`) lists, as its
 *   newest entry, a genuine transaction an earlier answer listed as the newest (the reader's
 *   cursor, or after a restart a transaction of the server's earlier life), at the newest slot.
 * Old state and forged history entries are the devnet's own faults (`alternateBehindSlots`,
 * `forgedHistory`: ./faults.ts). Batch requests pass unchanged (the chain client sends none).
 */

export const LIES = ['inflatedSlots', 'forgedNonces', 'replayedHistory'] as const;
export type Lie = (typeof LIES)[number];

/** Far beyond any slot a sequence reaches: the claim is plainly ahead of every other endpoint. */
const INFLATION = 1_000_000;
const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const NONCE_ACCOUNT_BYTES = 80;
const NONCE_VALUE_OFFSET = 40;
const FORGING_MASK = 0xa5;
const CONTEXT_METHODS = new Set([
  'getMultipleAccounts',
  'getAccountInfo',
  'getBalance',
  'getLatestBlockhash',
  'getSignatureStatuses',
  'getTokenAccountBalance',
]);

interface HistoryEntry {
  signature: string;
  slot: number;
}

interface Request {
  method: string;
  params?: unknown[];
}

type Result = unknown;

export class LyingEndpoints {
  private readonly lies = new Map<string, Lie>();
  /** Per address, the newest entry of the latest history answer that listed any: what a replaying node re-lists. */
  private readonly listed = new Map<string, HistoryEntry>();
  /** How many answers each lie rewrote: what the summary reports. */
  readonly told: Record<Lie, number> = { inflatedSlots: 0, forgedNonces: 0, replayedHistory: 0 };

  set(url: string, lie: Lie): void {
    this.lies.set(new URL(url).origin, lie);
  }

  clear(url: string): void {
    this.lies.delete(new URL(url).origin);
  }

  /** `inner` answers every request: the real fetch, or a test's. */
  constructor(private readonly inner: RpcFetch = globalThis.fetch) {}

  readonly fetch: RpcFetch = async (input, init) => {
    const response = await this.inner(input, init);
    const request = JSON.parse(String(init?.body)) as Request | Request[];
    if (Array.isArray(request)) return response;
    const lie = this.lies.get(new URL(String(input instanceof Request ? input.url : input)).origin);
    const remembers = request.method === 'getSignaturesForAddress';
    if (lie === undefined && !remembers) return response;
    const body = (await response.clone().json()) as { result?: Result };
    if (body.result === undefined || body.result === null) return response;
    const result = lie === undefined ? undefined : this.rewrite(lie, request, body.result);
    if (remembers) this.remember(request, body.result);
    if (result === undefined) return response;
    this.told[lie!] += 1;
    return new Response(JSON.stringify({ ...body, result }), { status: response.status, headers: { 'content-type': 'application/json' } });
  };

  /** The lie's answer, or undefined where it has nothing to change. */
  private rewrite(lie: Lie, request: Request, result: Result): Result | undefined {
    switch (lie) {
      case 'inflatedSlots':
        return inflated(request.method, result);
      case 'forgedNonces':
        return this.forgedNonces(request.method, result);
      case 'replayedHistory':
        return this.replayed(request, result);
    }
  }

  private remember(request: Request, result: Result): void {
    const newest = (result as HistoryEntry[])[0];
    if (newest !== undefined) this.listed.set(String(request.params?.[0]), { signature: newest.signature, slot: newest.slot });
  }

  private replayed(request: Request, result: Result): Result | undefined {
    const options = (request.params?.[1] ?? {}) as { until?: string; minContextSlot?: number };
    const old = this.listed.get(String(request.params?.[0]));
    const entries = result as Array<HistoryEntry & Record<string, unknown>>;
    if (options.until === undefined || old === undefined || entries.some((entry) => entry.signature === old.signature)) return undefined;
    const slot = Math.max(options.minContextSlot ?? 0, ...entries.map((entry) => entry.slot));
    return [{ signature: old.signature, slot, err: null, memo: null, blockTime: null, confirmationStatus: 'confirmed' }, ...entries];
  }

  private forgedNonces(method: string, result: Result): Result | undefined {
    const { value } = result as { value?: unknown };
    let accounts: unknown[];
    if (method === 'getMultipleAccounts') accounts = value as unknown[];
    else if (method === 'getAccountInfo') accounts = [value];
    else return undefined;
    let changed = false;
    for (const account of accounts) changed = this.forgeNonce(account as { owner?: string; data?: [string, string] } | null) || changed;
    return changed ? result : undefined;
  }

  private forgeNonce(account: { owner?: string; data?: [string, string] } | null): boolean {
    if (account === null || account.owner !== SYSTEM_PROGRAM || account.data === undefined) return false;
    const bytes = Buffer.from(account.data[0], 'base64');
    if (bytes.length !== NONCE_ACCOUNT_BYTES) return false;
    // The same lie for the same value, every read: a consistent liar, whose values a second read of it repeats.
    for (let i = NONCE_VALUE_OFFSET; i < NONCE_VALUE_OFFSET + 32; i += 1) bytes[i] = bytes[i]! ^ FORGING_MASK;
    account.data[0] = bytes.toString('base64');
    return true;
  }
}

function inflated(method: string, result: Result): Result | undefined {
  if (method === 'getSlot' || method === 'getBlockHeight') return (result as number) + INFLATION;
  if (method === 'getSignaturesForAddress') return (result as HistoryEntry[]).map((entry) => ({ ...entry, slot: entry.slot + INFLATION }));
  if (method === 'getEpochInfo') {
    const info = result as { absoluteSlot: number; blockHeight: number };
    return { ...info, absoluteSlot: info.absoluteSlot + INFLATION, blockHeight: info.blockHeight + INFLATION };
  }
  if (!CONTEXT_METHODS.has(method)) return undefined;
  const withContext = result as { context?: { slot: number } };
  if (withContext.context === undefined) return undefined;
  return { ...withContext, context: { ...withContext.context, slot: withContext.context.slot + INFLATION } };
}
