import { createHash } from 'node:crypto';
import { PublicKey, SystemProgram, type TransactionInstruction } from '@solana/web3.js';
import { CURRENT_NONCE_VERSION, decodeNonceState, NONCE_ACCOUNT_SIZE } from './codec/nonce-state.js';

/**
 * The authority's durable-nonce accounts (PROTOCOL.md "Durable nonces"): where they are, what
 * their 80 bytes say, what they cost, and the System instructions that create and advance them.
 * A leaf module: the chain client, `npm run ops -- nonce` and the tests share it.
 */

/**
 * The rent-exempt minimum of an account of `dataLength` bytes, as the runtime computes it: (128
 * bytes of account overhead + its data) x 3,480 lamports per byte-year x 2 years. Computed here
 * rather than asked of a node: the cost `nonce init` prints is not a node's word.
 */
export function rentExemptLamports(dataLength: number): number {
  return (128 + dataLength) * 3_480 * 2;
}

/** An 80-byte nonce account's: 1,447,680 lamports. */
export const NONCE_ACCOUNT_RENT_LAMPORTS = rentExemptLamports(NONCE_ACCOUNT_SIZE);

/** The seed of nonce account `position` on the chain `chainId`: `bridge-nonce-<chain id>-<position>`. */
export function nonceSeed(chainId: number, position: number): string {
  return `bridge-nonce-${chainId}-${position}`;
}

/** createAccountWithSeed's address: sha256(authority || seed || System program), owned by the System program. */
export function nonceAddress(authority: PublicKey, chainId: number, position: number): PublicKey {
  const hash = createHash('sha256')
    .update(authority.toBytes())
    .update(nonceSeed(chainId, position))
    .update(SystemProgram.programId.toBytes())
    .digest();
  return new PublicKey(hash);
}

/** What one nonce account read says: absent, usable (the authority is the nonce authority), or unusable and why. */
export type NonceAccountState = { kind: 'missing' } | { kind: 'ready'; nonce: string } | { kind: 'unusable'; reason: string };

/**
 * An address someone sent lamports to before the nonce account was set up there: a System
 * account without data (anyone can fund any address; only the authority can allocate it, its
 * seed's base). `nonce init` sets it up all the same (`nonceSetupInstructions`).
 */
export function isFundedOnly(account: { owner: PublicKey; data: Uint8Array } | null): boolean {
  return account?.owner.equals(SystemProgram.programId) === true && account.data.length === 0;
}

/** Decodes a nonce account's bytes as this authority's, without trusting the node's word on owner or shape. */
export function nonceAccountState(account: { owner: PublicKey; data: Uint8Array } | null, authority: PublicKey): NonceAccountState {
  if (account === null) return { kind: 'missing' };
  if (!account.owner.equals(SystemProgram.programId))
    return { kind: 'unusable', reason: `owned by ${account.owner.toBase58()}, not the System program` };
  const { data } = account;
  if (data.length !== NONCE_ACCOUNT_SIZE) return { kind: 'unusable', reason: `${data.length} bytes, not a nonce account's ${NONCE_ACCOUNT_SIZE}` };
  const state = decodeNonceState(data);
  if (state?.state !== 'initialized' || state.version !== CURRENT_NONCE_VERSION) {
    return { kind: 'unusable', reason: 'not an initialized nonce account (version 1, state 1)' };
  }
  if (state.authority !== authority.toBase58()) return { kind: 'unusable', reason: `its nonce authority is ${state.authority}, not this authority` };
  return { kind: 'ready', nonce: state.durableNonce };
}

/** AdvanceNonceAccount, the first instruction of every durable-nonce transaction. */
export function advanceNonceInstruction(nonce: PublicKey, authority: PublicKey): TransactionInstruction {
  return SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: authority });
}

/**
 * The nonce account at position `position`, set up whether or not its address already holds
 * lamports (someone may fund it first, which would make CreateAccountWithSeed fail for good with
 * AccountAlreadyInUse): AllocateWithSeed (80 bytes, owned by the System program: Agave's
 * allocate-and-assign, which keeps the lamports there), a Transfer of `topUpLamports` from the
 * authority when the address holds less than the rent-exempt minimum, then
 * InitializeNonceAccount; the authority signs (the seed's base) and pays. Lamports sent to the
 * address between the read and the landing only add to its balance.
 */
export function nonceSetupInstructions(authority: PublicKey, chainId: number, position: number, topUpLamports: number): TransactionInstruction[] {
  const address = nonceAddress(authority, chainId, position);
  const seed = nonceSeed(chainId, position);
  const allocate = SystemProgram.allocate({
    accountPubkey: address,
    basePubkey: authority,
    seed,
    space: NONCE_ACCOUNT_SIZE,
    programId: SystemProgram.programId,
  });
  const topUp = topUpLamports > 0 ? [SystemProgram.transfer({ fromPubkey: authority, toPubkey: address, lamports: topUpLamports })] : [];
  return [allocate, ...topUp, SystemProgram.nonceInitialize({ noncePubkey: address, authorizedPubkey: authority })];
}
