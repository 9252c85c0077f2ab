import { createHash } from 'node:crypto';
import { ComputeBudgetProgram, PublicKey, SystemProgram, TransactionInstruction, VersionedMessage } from '@solana/web3.js';
import { NONCE_ACCOUNT_SIZE } from './codec/nonce-state.js';
import { NONCE_ACCOUNT_RENT_LAMPORTS, nonceAccountState } from './nonce-account.js';

/**
 * The signing lease (docs/chain-client.md, "The lease"): one durable-nonce account of the
 * authority on the destination chain, at an address derived from the authority and a seed that
 * names the source chain. It exists while an instance holds the lease and is closed when that
 * instance releases it; its nonce value tells holders apart. A leaf module: the chain client, the
 * devnet tests and the property model share it.
 */

/** The seed: `bridge-lease-<source chain id>` (at most 23 bytes of the 32 a seed may have). */
function leaseSeed(sourceChainId: number): string {
  return `bridge-lease-${sourceChainId}`;
}

/** createAccountWithSeed's address: sha256(authority || seed || System program). */
export function leaseAddress(authority: PublicKey, sourceChainId: number): PublicKey {
  const hash = createHash('sha256').update(authority.toBytes()).update(leaseSeed(sourceChainId)).update(SystemProgram.programId.toBytes()).digest();
  return new PublicKey(hash);
}

/**
 * What one read of the lease account says. `free`: no account, or a System account without data
 * (anyone can send lamports to the address; that takes nothing). `held`: this authority's
 * initialized nonce account, `value` its nonce (each taking gives a new one). `unusable`: anything
 * else (only the key could make it: an operator's hand), and why.
 */
export type LeaseState =
  | { state: 'free'; lamports: number }
  | { state: 'held'; value: string; lamports: number }
  | { state: 'unusable'; reason: string };

export function leaseState(account: { owner: PublicKey; lamports: number; data: Uint8Array } | null, authority: PublicKey): LeaseState {
  if (account === null) return { state: 'free', lamports: 0 };
  if (account.owner.equals(SystemProgram.programId) && account.data.length === 0) return { state: 'free', lamports: account.lamports };
  const nonce = nonceAccountState(account, authority);
  if (nonce.kind === 'ready') return { state: 'held', value: nonce.nonce, lamports: account.lamports };
  return { state: 'unusable', reason: nonce.kind === 'unusable' ? nonce.reason : 'missing' };
}

/**
 * The instance mark: a read-only account this process's lease transactions list after the
 * System instruction's own accounts (the System program ignores accounts past those it reads),
 * a public key drawn at random once per process. Two instances taking the same lease against
 * the same value or blockhash would otherwise sign identical messages, and Ed25519 signatures
 * are deterministic: one landing, two instances each seeing "its" signature confirmed.
 */
function marked(instruction: TransactionInstruction, instance: PublicKey): TransactionInstruction {
  return new TransactionInstruction({ ...instruction, keys: [...instruction.keys, { pubkey: instance, isSigner: false, isWritable: false }] });
}

/**
 * Taking a free lease, in one transaction: AllocateWithSeed (80 bytes, the System program's),
 * the rent, InitializeNonceAccount. Allocate refuses an account that already has data, so of
 * two instances taking at once exactly one succeeds; it works on an address someone pre-funded
 * (CreateAccountWithSeed would refuse that one for good). The rent is always sent whole: lamports
 * someone else put there are extra, returned with the rest on release. `instance`: the mark.
 */
export function takeLeaseInstructions(authority: PublicKey, sourceChainId: number, instance: PublicKey): TransactionInstruction[] {
  const lease = leaseAddress(authority, sourceChainId);
  return [
    marked(
      SystemProgram.allocate({
        accountPubkey: lease,
        basePubkey: authority,
        seed: leaseSeed(sourceChainId),
        space: NONCE_ACCOUNT_SIZE,
        programId: SystemProgram.programId,
      }),
      instance,
    ),
    SystemProgram.transfer({ fromPubkey: authority, toPubkey: lease, lamports: NONCE_ACCOUNT_RENT_LAMPORTS }),
    SystemProgram.nonceInitialize({ noncePubkey: lease, authorizedPubkey: authority }),
  ];
}

/**
 * Moving the lease on from the value it holds: AdvanceNonceAccount, signed as a durable-nonce
 * transaction against that value, so it lands only while the lease still holds it
 * (compare-and-swap). Taking over a quiet holder's lease is one (of two standbys taking over at
 * once exactly one lands; a holder that released or moved on in between makes it void, never
 * charged); so is the first step of a release (binding it to the value held).
 */
export function advanceLeaseInstructions(authority: PublicKey, sourceChainId: number, instance: PublicKey): TransactionInstruction[] {
  return [marked(SystemProgram.nonceAdvance({ noncePubkey: leaseAddress(authority, sourceChainId), authorizedPubkey: authority }), instance)];
}

/**
 * Closing: WithdrawNonceAccount of the whole balance to the authority. It cannot share a
 * durable-nonce transaction with the advance that binds it (closing a nonce account whose value
 * is the current one is NonceBlockhashNotExpired), so a release is two transactions: the
 * advance against the value held, then this, from the value that advance produced.
 */
export function releaseLeaseInstructions(authority: PublicKey, sourceChainId: number, lamports: number): TransactionInstruction[] {
  return [
    SystemProgram.nonceWithdraw({ noncePubkey: leaseAddress(authority, sourceChainId), authorizedPubkey: authority, toPubkey: authority, lamports }),
  ];
}

// System program instructions (u32 little-endian tags), and where each of the lease's shapes has the lease and the authority.
const TRANSFER = 2;
const ADVANCE_NONCE = 4;
const WITHDRAW_NONCE = 5;
const INITIALIZE_NONCE = 6;
const ALLOCATE_WITH_SEED = 9;

/** Per lease shape: the position of the lease among its accounts, of the authority (when it must be there), and how many accounts it reads. */
const LEASE_SHAPES: ReadonlyMap<number, { lease: number; authority?: number; accounts: number }> = new Map([
  [ALLOCATE_WITH_SEED, { lease: 0, authority: 1, accounts: 2 }],
  [TRANSFER, { lease: 1, authority: 0, accounts: 2 }],
  [INITIALIZE_NONCE, { lease: 0, accounts: 3 }],
  [ADVANCE_NONCE, { lease: 0, authority: 2, accounts: 3 }],
  [WITHDRAW_NONCE, { lease: 0, authority: 1, accounts: 5 }],
]);

interface DecodedInstruction {
  program: string;
  accounts: string[];
  tag: number | undefined;
}

function decoded(message: Uint8Array): { blockhash: string; instructions: DecodedInstruction[] } | undefined {
  let parsed: VersionedMessage;
  try {
    parsed = VersionedMessage.deserialize(message);
  } catch {
    return undefined;
  }
  const keys = parsed.staticAccountKeys.map((key) => key.toBase58());
  const instructions = parsed.compiledInstructions.map((instruction) => ({
    program: keys[instruction.programIdIndex] ?? '',
    accounts: instruction.accountKeyIndexes.map((index) => keys[index] ?? ''),
    tag: instruction.data.length >= 4 ? Buffer.from(instruction.data).readUInt32LE(0) : undefined,
  }));
  return { blockhash: parsed.recentBlockhash, instructions };
}

/** One of the lease's own shapes on `lease`: the accounts it reads at their places, and at most the instance mark after them. */
function isLeaseShape(instruction: DecodedInstruction, lease: string, authority: string): boolean {
  const shape = instruction.tag === undefined ? undefined : LEASE_SHAPES.get(instruction.tag);
  if (instruction.program !== SystemProgram.programId.toBase58() || shape === undefined) return false;
  const places = instruction.accounts.length === shape.accounts || instruction.accounts.length === shape.accounts + 1;
  return (
    places && instruction.accounts[shape.lease] === lease && (shape.authority === undefined || instruction.accounts[shape.authority] === authority)
  );
}

/**
 * Whether a transaction's message is a lease operation, exactly: every instruction is a compute
 * budget's or one of the lease's own shapes (allocate, fund from the authority, initialize,
 * advance, withdraw to the authority) on the lease account. Another instance's taking, taking
 * over or releasing is not a vote; anything else the key signed is judged as any transaction
 * (a transfer that merely lists the lease is a second signer).
 */
export function isLeaseOperation(message: Uint8Array, lease: PublicKey, authority: PublicKey): boolean {
  const instructions = decoded(message)?.instructions;
  if (instructions === undefined) return false;
  const own = instructions.filter((instruction) => instruction.program !== ComputeBudgetProgram.programId.toBase58());
  return own.length > 0 && own.every((instruction) => isLeaseShape(instruction, lease.toBase58(), authority.toBase58()));
}

/**
 * Whether a message moves the lease on from `value`: a durable-nonce transaction against it
 * (its blockhash the value, its first instruction the lease's advance). Signed by the key and
 * not by this process, it is another instance's proof of having taken the lease from the
 * holder of `value`: only the key can sign it, and only once `value` existed.
 */
export function movesLeaseFrom(message: Uint8Array, lease: PublicKey, authority: PublicKey, value: string): boolean {
  const parsed = decoded(message);
  const first = parsed?.instructions[0];
  return (
    parsed !== undefined &&
    parsed.blockhash === value &&
    first !== undefined &&
    first.tag === ADVANCE_NONCE &&
    isLeaseShape(first, lease.toBase58(), authority.toBase58())
  );
}
