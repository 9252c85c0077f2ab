import { randomBytes } from 'node:crypto';
import { ComputeBudgetProgram, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthorityHistory, HISTORY_MAX_LOOKUPS, HISTORY_MAX_PAGES, HISTORY_PAGE_LIMIT, MAX_SIGNED_KEPT, SignedSignatures } from '../../../src/chain/client/authority-history.js';
import { createChainRpc } from '../../../src/chain/rpc/chain-rpc.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { captureLogs, type CapturedLogs } from '../../support/log-capture.js';
import { NO_HISTORY_REPLY, startJsonRpcServer, type JsonRpcTestServer, type Reply, type RpcCall } from '../rpc/json-rpc-test-server.js';

/**
 * AuthorityHistory against a scripted node: the key's history (newest first) answered with
 * getSignaturesForAddress's `limit`, `before` and `until`, and getTransaction's signers.
 */

const authority = Keypair.generate();
const other = Keypair.generate();

interface Entry {
  signature: string;
  slot: number;
  /** Who signed it; `authority` is the key, `funder` lists the key without its signature. */
  signedBy: 'authority' | 'funder';
}

class ScriptedHistory {
  /** Newest first. */
  entries: Entry[] = [];
  failGetTransaction = false;
  /** Answer as a node that does not know `until` (lagging or pruned): it bounds nothing. */
  forgetsUntil = false;
  /** Answer every history read with -32011, as a node without history. */
  noHistory = false;
  private slot = 100;

  land(count: number, signedBy: Entry['signedBy'] = 'authority'): Entry[] {
    const landed = Array.from({ length: count }, () => ({ signature: bs58.encode(randomBytes(64)), slot: (this.slot += 1), signedBy }));
    this.entries.unshift(...[...landed].reverse());
    return landed;
  }

  readonly answer = (call: RpcCall): Reply => {
    if (this.noHistory) return NO_HISTORY_REPLY;
    if (call.method === 'getSignaturesForAddress') {
      const { limit, before, until } = call.params[1] as { limit: number; before?: string; until?: string };
      const start = before === undefined ? 0 : this.entries.findIndex((e) => e.signature === before) + 1;
      const end = until === undefined || this.forgetsUntil ? this.entries.length : this.entries.findIndex((e) => e.signature === until);
      const page = this.entries.slice(start, end).slice(0, limit);
      return { result: page.map(({ signature, slot }) => ({ signature, slot, err: null, memo: null, blockTime: 1, confirmationStatus: 'finalized' })) };
    }
    if (call.method === 'getTransaction') {
      if (this.failGetTransaction) return { http: 503 };
      const entry = this.entries.find((e) => e.signature === call.params[0]);
      if (entry === undefined) return { result: null };
      return { result: { slot: entry.slot, transaction: [wireSignedBy(entry.signedBy), 'base64'], meta: { err: null } } };
    }
    return { error: { code: -32601, message: `Method not found: ${call.method}` } };
  };
}

/** A transaction the authority signs, or one a funder signs that lists the authority as a plain account. */
function wireSignedBy(signedBy: Entry['signedBy']): string {
  const payer = signedBy === 'authority' ? authority : other;
  const instruction = ComputeBudgetProgram.setComputeUnitLimit({ units: 1000 });
  instruction.keys.push({ pubkey: authority.publicKey, isSigner: false, isWritable: true });
  const transaction = new Transaction({ feePayer: payer.publicKey, blockhash: PublicKey.default.toBase58(), lastValidBlockHeight: 0 }).add(instruction);
  transaction.sign(payer);
  return transaction.serialize().toString('base64');
}

let server: JsonRpcTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(): Promise<{ chain: ScriptedHistory; history: AuthorityHistory; signed: SignedSignatures; logs: CapturedLogs; calls: () => RpcCall[] }> {
  const chain = new ScriptedHistory();
  server = await startJsonRpcServer(chain.answer);
  const rpc = createChainRpc({ chain: 'target', url: server.url, timeoutMs: 5_000, metrics: createMetrics(new Registry()) });
  const signed = new SignedSignatures();
  const logs = captureLogs('info');
  const history = new AuthorityHistory({ rpc, authority: authority.publicKey, signed, logger: logs.logger });
  const s = server;
  return { chain, history, signed, logs, calls: () => s.calls };
}

const signal = () => new AbortController().signal;

describe('AuthorityHistory', () => {
  it('the first read sets the baseline with one small call and reports nothing that came before', async () => {
    const { chain, history, calls } = await start();
    chain.land(3);
    expect(await history.readNew(signal())).toEqual([]);
    expect(calls()).toEqual([{ method: 'getSignaturesForAddress', params: [authority.publicKey.toBase58(), expect.objectContaining({ limit: 1 })] }]);
    expect(await history.readNew(signal())).toEqual([]);
    expect(calls()[1]!.params[1]).toMatchObject({ limit: HISTORY_PAGE_LIMIT, until: chain.entries[0]!.signature, minContextSlot: chain.entries[0]!.slot });
  });

  it('a node that does not know `until` lists older history: nothing is reported, and the next read looks again from the same place', async () => {
    const { chain, history, signed } = await start();
    chain.land(5);
    await history.readNew(signal());
    const [foreign] = chain.land(1);
    chain.forgetsUntil = true;
    // The authority's own older transactions (signed by a previous life of this server) are not reported as a second signer.
    expect(await history.readNew(signal())).toEqual([]);
    chain.forgetsUntil = false;
    expect(signed.has(foreign!.signature)).toBe(false);
    expect(await history.readNew(signal())).toEqual([{ signature: foreign!.signature, slot: foreign!.slot, signedHere: false }]);
  });

  it('no history on the node: every read reports nothing (the check is off) instead of failing the cycle', async () => {
    const { chain, history } = await start();
    chain.noHistory = true;
    expect(await history.readNew(signal())).toEqual([]);
    expect(await history.readNew(signal())).toEqual([]);
  });

  it('pages back to the previous newest; marks what this process signed; looks up only the rest; drops transfers to the key', async () => {
    const { chain, history, signed, calls } = await start();
    await history.readNew(signal());
    const own = chain.land(30);
    for (const { signature } of own) signed.add(signature);
    const [foreign] = chain.land(1);
    const [funding] = chain.land(1, 'funder');
    const more = chain.land(3);
    for (const { signature } of more) signed.add(signature);

    const reported = await history.readNew(signal());
    const newestFirst = [...more].reverse();
    expect(reported).toEqual([
      ...newestFirst.map(({ signature, slot }) => ({ signature, slot, signedHere: true })),
      { signature: foreign!.signature, slot: foreign!.slot, signedHere: false },
      ...[...own].reverse().map(({ signature, slot }) => ({ signature, slot, signedHere: true })),
    ]);
    expect(reported.map((t) => t.signature)).not.toContain(funding!.signature);
    const methods = calls().slice(1).map((call) => call.method);
    expect(methods.filter((m) => m === 'getSignaturesForAddress')).toHaveLength(2);
    expect(calls().filter((c) => c.method === 'getTransaction').map((c) => c.params[0])).toEqual([funding!.signature, foreign!.signature]);
    expect(await history.readNew(signal())).toEqual([]);
  });

  it(`reads at most ${HISTORY_MAX_PAGES} pages, warns about the rest, and moves on`, async () => {
    const { chain, history, signed, logs, calls } = await start();
    await history.readNew(signal());
    const landed = chain.land(HISTORY_PAGE_LIMIT * HISTORY_MAX_PAGES + 7);
    for (const { signature } of landed) signed.add(signature);
    expect(await history.readNew(signal())).toHaveLength(HISTORY_PAGE_LIMIT * HISTORY_MAX_PAGES);
    expect(calls().filter((c) => c.method === 'getSignaturesForAddress')).toHaveLength(1 + HISTORY_MAX_PAGES);
    expect(logs.records()).toContainEqual(expect.objectContaining({ level: 'warn', chain: 'target', checked: 100, msg: expect.stringContaining('not checked for a second signer') }));
    expect(await history.readNew(signal())).toEqual([]);
  });

  it(`looks up at most the newest ${HISTORY_MAX_LOOKUPS} transactions it did not sign, and warns about the rest`, async () => {
    const { chain, history, logs, calls } = await start();
    await history.readNew(signal());
    const [foreign] = chain.land(1);
    const spam = chain.land(HISTORY_MAX_LOOKUPS + 5, 'funder');
    // The foreign vote is older than the newest lookups: not reached this read.
    expect(await history.readNew(signal())).toEqual([]);
    const looked = calls().filter((c) => c.method === 'getTransaction').map((c) => c.params[0] as string);
    expect(looked.sort()).toEqual([...spam].reverse().slice(0, HISTORY_MAX_LOOKUPS).map((one) => one.signature).sort());
    expect(looked).not.toContain(foreign!.signature);
    expect(logs.records()).toContainEqual(expect.objectContaining({ level: 'warn', chain: 'target', checked: HISTORY_MAX_LOOKUPS, unchecked: 6 }));
    const [next] = chain.land(1);
    expect(await history.readNew(signal())).toEqual([{ signature: next!.signature, slot: next!.slot, signedHere: false }]);
  });

  it('a failed lookup fails the read and leaves the cursor: the next read reports the same transactions', async () => {
    const { chain, history } = await start();
    await history.readNew(signal());
    const [foreign] = chain.land(1);
    chain.failGetTransaction = true;
    await expect(history.readNew(signal())).rejects.toMatchObject({ code: 'CHAIN__RPC_FAILED', context: { method: 'getTransaction' } });
    chain.failGetTransaction = false;
    expect(await history.readNew(signal())).toEqual([{ signature: foreign!.signature, slot: foreign!.slot, signedHere: false }]);
  });

  it('keeps the most recent signatures this process signed, bounded', async () => {
    const signed = new SignedSignatures();
    const first = bs58.encode(randomBytes(64));
    signed.add(first);
    for (let i = 0; i < MAX_SIGNED_KEPT; i++) signed.add(String(i));
    expect(signed.has(first)).toBe(false);
    expect(signed.has('0')).toBe(true);
    expect(signed.has(String(MAX_SIGNED_KEPT - 1))).toBe(true);
  });
});
