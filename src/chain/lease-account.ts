import { createHash } from 'node:crypto';
import { ComputeBudgetProgram, Message, PublicKey, SystemProgram, VersionedMessage, type TransactionInstruction } from '@solana/web3.js';
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
export type LeaseState = { state: 'free'; lamports: number } | { state: 'held'; value: string; lamports: number } | { state: 'unusable'; reason: string };

export function leaseState(account: { owner: PublicKey; lamports: number; data: Uint8Array } | null, authority: PublicKey): LeaseState {
  if (account === null) return { state: 'free', lamports: 0 };
  if (account.owner.equals(SystemProgram.programId) && account.data.length === 0) return { state: 'free', lamports: account.lamports };
  const nonce = nonceAccountState(account, authority);
  if (nonce.kind === 'ready') return { state: 'held', value: nonce.nonce, lamports: account.lamports };
  return { state: 'unusable', reason: nonce.kind === 'unusable' ? nonce.reason : 'missing' };
}

/**
 * Taking a free lease, in one transaction: AllocateWithSeed (80 bytes, the System program's),
 * the rent, InitializeNonceAccount. Allocate refuses an account that already has data, so of
 * two instances taking at once exactly one succeeds; it works on an address someone pre-funded
 * (CreateAccountWithSeed would refuse that one for good). The rent is always sent whole: lamports
 * someone else put there are extra, returned with the rest on release.
 */
export function takeLeaseInstructions(authority: PublicKey, sourceChainId: number): TransactionInstruction[] {
  const lease = leaseAddress(authority, sourceChainId);
  return [
    SystemProgram.allocate({ accountPubkey: lease, basePubkey: authority, seed: leaseSeed(sourceChainId), space: NONCE_ACCOUNT_SIZE, programId: SystemProgram.programId }),
    SystemProgram.transfer({ fromPubkey: authority, toPubkey: lease, lamports: NONCE_ACCOUNT_RENT_LAMPORTS }),
    SystemProgram.nonceInitialize({ noncePubkey: lease, authorizedPubkey: authority }),
  ];
}

/**
 * Taking over a lease whose holder went quiet: AdvanceNonceAccount, signed as a durable-nonce
 * transaction against the value seen. It lands only while the lease still holds that value, so
 * of two standbys taking over at once exactly one does, and a holder that released or moved on
 * in between makes it void (never charged).
 */
export function takeOverLeaseInstructions(authority: PublicKey, sourceChainId: number): TransactionInstruction[] {
  return [SystemProgram.nonceAdvance({ noncePubkey: leaseAddress(authority, sourceChainId), authorizedPubkey: authority })];
}

/** Releasing: WithdrawNonceAccount of the whole balance to the authority, which closes the account. */
export function releaseLeaseInstructions(authority: PublicKey, sourceChainId: number, lamports: number): TransactionInstruction[] {
  return [SystemProgram.nonceWithdraw({ noncePubkey: leaseAddress(authority, sourceChainId), authorizedPubkey: authority, toPubkey: authority, lamports })];
}

/**
 * Whether a transaction's message is a lease operation: every instruction the System program's
 * (or a compute budget's) and the lease account among its accounts. Another instance's taking,
 * taking over or releasing is not a vote: the history does not count it as a second signer.
 */
export function isLeaseOperation(message: Uint8Array, lease: PublicKey): boolean {
  let parsed: Message | VersionedMessage;
  try {
    parsed = VersionedMessage.deserialize(message);
  } catch {
    return false;
  }
  const keys = parsed.staticAccountKeys;
  const programs = parsed.compiledInstructions.map((instruction) => keys[instruction.programIdIndex]);
  const allowed = [SystemProgram.programId, ComputeBudgetProgram.programId];
  return keys.some((key) => key.equals(lease)) && programs.every((program) => program !== undefined && allowed.some((id) => id.equals(program)));
}
