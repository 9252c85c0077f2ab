import { ComputeBudgetProgram } from '@solana/web3.js';
import bs58 from 'bs58';
import type { AuthoritySigner } from '../../../../signer/authority-signer.js';
import { advanceNonceInstruction } from '../../../nonce-account.js';
import { signTransaction } from '../build/sign-transaction.js';
import type { NonceBinding } from '../build/sign-transaction.js';
import { NO_EXPIRY } from '../watch/signature-watch.js';

/**
 * Voiding a nonce-mode transaction the crank no longer wants (docs/chain-client.md, "Bounded in
 * flight"): its versions stay valid while their nonce holds the value they were signed against,
 * so the crank moves it itself, with a transaction of its own that only advances the nonce,
 * signed against that same value. Exactly one of them can land, a version or the void: either
 * moves the value, and none of the others can land after it; the void can never advance the
 * nonce a second time (a value once moved never comes back), so it never moves a value that
 * is not the versions'.
 *
 * It pays the chain's priority-fee cap (BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS) on VOID_UNIT_LIMIT
 * units: AdvanceNonceAccount and the two budget instructions use about 450.
 */

const VOID_UNIT_LIMIT = 1_000;

export interface SignedVoid {
  wire: Uint8Array;
  signature: string;
}

export async function signVoid({
  signer,
  binding,
  microLamportsPerUnit,
}: {
  signer: AuthoritySigner;
  binding: NonceBinding;
  microLamportsPerUnit: number;
}): Promise<SignedVoid> {
  const instructions = [
    advanceNonceInstruction(binding.lane, signer.publicKey),
    ComputeBudgetProgram.setComputeUnitLimit({ units: VOID_UNIT_LIMIT }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: microLamportsPerUnit }),
  ];
  const { wire, signature } = await signTransaction(signer, instructions, binding.nonce, NO_EXPIRY);
  return { wire, signature: bs58.encode(signature) };
}
