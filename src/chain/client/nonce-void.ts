import { ComputeBudgetProgram, type PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { AuthoritySigner } from '../authority-signer.js';
import { advanceNonceInstruction } from '../nonce-account.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import { signTransaction } from './sign-transaction.js';

/**
 * Voiding a nonce-mode transaction the crank no longer wants (docs/chain-client.md, "Bounded in
 * flight"): its versions stay valid while their nonce holds the value they were signed against,
 * so the crank moves it itself, with a transaction of its own that only advances the nonce. It
 * is signed with a recent blockhash, so it lands or expires within 150 blocks; one whose nonce
 * has not moved VOID_RESIGN_SLOTS slots after it was signed is signed again. Whichever lands
 * first, a version or the void, no version can land after it.
 *
 * It pays the chain's priority-fee cap (BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS) on VOID_UNIT_LIMIT
 * units: AdvanceNonceAccount and the two budget instructions use about 450.
 */

const VOID_UNIT_LIMIT = 1_000;
/** A blockhash's life in slots at the least (a slot makes at most one block). */
export const VOID_RESIGN_SLOTS = 150;

export interface SignedVoid {
  wire: Uint8Array;
  signature: string;
  /** The slot of the nonce read that decided it: a void is signed again VOID_RESIGN_SLOTS later. */
  atSlot: number;
}

export async function signVoid(
  { rpc, signer, lane, microLamportsPerUnit, atSlot }: { rpc: ChainRpc; signer: AuthoritySigner; lane: PublicKey; microLamportsPerUnit: number; atSlot: number },
  signal: AbortSignal,
): Promise<SignedVoid> {
  const { blockhash, lastValidBlockHeight } = await rpc.getLatestBlockhash('confirmed', signal);
  const instructions = [
    advanceNonceInstruction(lane, signer.publicKey),
    ComputeBudgetProgram.setComputeUnitLimit({ units: VOID_UNIT_LIMIT }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: microLamportsPerUnit }),
  ];
  const { wire, signature } = await signTransaction(signer, instructions, blockhash, lastValidBlockHeight);
  return { wire, signature: bs58.encode(signature), atSlot };
}
