import { SystemProgram, SYSVAR_RECENT_BLOCKHASHES_PUBKEY, VersionedMessage } from '@solana/web3.js';
import bs58 from 'bs58';
import type { PublicKey } from '@solana/web3.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import { durableNonceOf } from '../../codec/nonce-state.js';
import { nonceAddress } from '../../nonce-account.js';

/**
 * What makes a transaction signed with the key a proof of a second signer (docs/chain-client.md,
 * "Who signs: proof, not reports"). Its signatures verify (./authority-history.ts), it is not
 * one of this process's, and it is new: its recent blockhash (a durable nonce value, in nonce
 * mode) is one this process saw from its first read on. A genuine transaction a node re-lists
 * long after it landed carries a blockhash that expired long before: not new, never a second
 * signer. The values seen are the RecentBlockhashes sysvar's 150 at every authority read (a
 * blockhash lives 150 blocks, so reads at most that far apart see every blockhash a landing
 * transaction can carry), the nonce values derived from them (a nonce advanced in those blocks),
 * and every nonce value of the pool's reads.
 *
 * Bounds: at most MAX_RECENT_VALUES values, the oldest forgotten first: a blockhash older than
 * 150 blocks cannot be in a transaction that lands now, and a cycle adds at most 2 x 150 plus the pool.
 */

export const MAX_RECENT_VALUES = 4_096;

/** The RecentBlockhashes sysvar: a u64 count, then per entry a 32-byte blockhash and a u64 fee. */
const RECENT_BLOCKHASH_ENTRY_BYTES = 40;
const MAX_RECENT_BLOCKHASHES = 150;

export class RecentValues {
  readonly #values = new Set<string>();
  /** Per nonce account of the pool, the first value this process saw of it: at most one entry per account. */
  readonly #firstNonces = new Map<string, string>();

  /** A nonce account's value from the pool's reads; the first one of each account is remembered too. */
  sawNonce(account: string, value: string): void {
    if (!this.#firstNonces.has(account)) this.#firstNonces.set(account, value);
    this.saw(value);
  }

  /**
   * The value is the first this process saw of the account: a transaction advancing it from there
   * may be its previous life's, left in flight at the restart (as ../nonce/nonce-moves.ts excuses the move).
   */
  isFirstNonce(account: string, value: string): boolean {
    return this.#firstNonces.get(account) === value;
  }

  saw(value: string): void {
    if (this.#values.has(value)) return;
    this.#values.add(value);
    if (this.#values.size > MAX_RECENT_VALUES) this.#values.delete(this.#values.values().next().value as string);
  }

  has(value: string): boolean {
    return this.#values.has(value);
  }

  /** Reads the chain's RecentBlockhashes sysvar and remembers its blockhashes; a failed or malformed read adds nothing. */
  async readRecentBlockhashes(rpc: ChainRpc, signal: AbortSignal): Promise<void> {
    const { account } = await rpc.getAccountInfo(SYSVAR_RECENT_BLOCKHASHES_PUBKEY, { commitment: 'confirmed' }, signal);
    for (const blockhash of recentBlockhashes(account?.data)) {
      this.saw(blockhash);
      // A nonce advanced in one of those blocks holds a value derived from its blockhash: a
      // transaction signed against it is as new as one signed against the blockhash, whichever
      // node served the account (a node forging nonce values cannot hide it).
      this.saw(durableNonceOf(blockhash));
    }
  }
}

/** The blockhashes a RecentBlockhashes sysvar's bytes list, newest first; none when the bytes are not one. */
export function recentBlockhashes(data: Uint8Array | undefined): string[] {
  if (data === undefined || data.length < 8) return [];
  const count = Number(Buffer.from(data).readBigUInt64LE(0));
  if (count > MAX_RECENT_BLOCKHASHES || data.length < 8 + count * RECENT_BLOCKHASH_ENTRY_BYTES) return [];
  return Array.from({ length: count }, (_, i) =>
    bs58.encode(data.subarray(8 + i * RECENT_BLOCKHASH_ENTRY_BYTES, 8 + i * RECENT_BLOCKHASH_ENTRY_BYTES + 32)),
  );
}

/** What a verified transaction's message says that matters to who signed it. */
export interface MessageFacts {
  /** Its recent blockhash: the nonce value it was signed against, when `advances` is set. */
  blockhash: string;
  /** The nonce account its first instruction advances (a durable-nonce transaction), if any. */
  advances?: string;
  /**
   * Every instruction creates, funds, initializes, withdraws or re-authorizes an account of this
   * key's nonce pool (`npm run ops -- nonce init`, or the operator closing one): the operator's
   * work on its own pool, which can move no vote and no transfer.
   */
  poolSetup: boolean;
}

// System program instructions (u32 little-endian tags).
const ASSIGN = 1;
const TRANSFER = 2;
const CREATE_WITH_SEED = 3;
const ADVANCE_NONCE = 4;
const WITHDRAW_NONCE = 5;
const INITIALIZE_NONCE = 6;
const AUTHORIZE_NONCE = 7;
const ALLOCATE = 8;
const ALLOCATE_WITH_SEED = 9;
const ASSIGN_WITH_SEED = 10;

/** For each setup instruction, the position (among its accounts) of the account it makes. */
const SETUP_TARGET: ReadonlyMap<number, number> = new Map([
  [ASSIGN, 0],
  [TRANSFER, 1],
  [CREATE_WITH_SEED, 1],
  [WITHDRAW_NONCE, 0],
  [INITIALIZE_NONCE, 0],
  [AUTHORIZE_NONCE, 0],
  [ALLOCATE, 0],
  [ALLOCATE_WITH_SEED, 0],
  [ASSIGN_WITH_SEED, 0],
]);

const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';

/** The facts of a message's bytes; undefined when they do not decode as a message. */
export function messageFacts(message: Uint8Array, poolAddresses: ReadonlySet<string>): MessageFacts | undefined {
  let decoded: VersionedMessage;
  try {
    decoded = VersionedMessage.deserialize(message);
  } catch {
    return undefined;
  }
  const keys = decoded.staticAccountKeys.map((key) => key.toBase58());
  const system = SystemProgram.programId.toBase58();
  const instructions = decoded.compiledInstructions.map((instruction) => ({
    program: keys[instruction.programIdIndex],
    accounts: instruction.accountKeyIndexes.map((index) => keys[index]),
    tag: instruction.data.length >= 4 ? Buffer.from(instruction.data).readUInt32LE(0) : undefined,
  }));
  const [first] = instructions;
  const advances = first?.program === system && first.tag === ADVANCE_NONCE ? first.accounts[0] : undefined;
  const systemOnes = instructions.filter((instruction) => instruction.program !== COMPUTE_BUDGET_PROGRAM);
  const poolSetup =
    systemOnes.length > 0 &&
    systemOnes.every((instruction) => {
      const target = instruction.tag === undefined ? undefined : SETUP_TARGET.get(instruction.tag);
      const account = target === undefined ? undefined : instruction.accounts[target];
      return instruction.program === system && account !== undefined && poolAddresses.has(account);
    });
  return { blockhash: decoded.recentBlockhash, ...(advances === undefined ? {} : { advances }), poolSetup };
}

/**
 * Every address `npm run ops -- nonce init` can create for this authority on the chain `chainId`:
 * positions 0 to `maxAccounts` - 1 (the largest pool BRIDGE_NONCE_ACCOUNTS allows), whatever
 * size this server runs with.
 */
export function poolAddressSet(authority: PublicKey, chainId: number, maxAccounts: number): Set<string> {
  return new Set(Array.from({ length: maxAccounts }, (_, position) => nonceAddress(authority, chainId, position).toBase58()));
}

/** The key of a nonce move, or of a transaction that advanced `account` from `from`. */
export function moveKey(account: string, from: string): string {
  return `${account}:${from}`;
}
