import { Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import type { AuthoritySigner } from '../../../../../src/signer/authority-signer.js';
import { FileKeySigner } from '../../../../../src/signer/file-key-signer.js';
import { signTransaction } from '../../../../../src/chain/client/submit/build/sign-transaction.js';
import { ackWithdrawInstruction } from '../../../../../src/chain/codec/builders.js';
import { DEFAULT_PROGRAM_ID } from '../../../../../src/chain/codec/layout.js';
import { depositTrackerAddress } from '../../../../../src/chain/pda.js';

const programId = new PublicKey(DEFAULT_PROGRAM_ID);
const authority = Keypair.fromSeed(new Uint8Array(32).fill(3));
const blockhash = Keypair.fromSeed(new Uint8Array(32).fill(4)).publicKey.toBase58();
const instructions = Array.from({ length: 5 }, (_, i) =>
  ackWithdrawInstruction({
    programId,
    authority: authority.publicKey,
    depositTracker: depositTrackerAddress(programId, 2),
    index: BigInt(i),
    approve: true,
    result: { tag: 1, reason: 0, amount: 9n },
  }),
);

describe('signTransaction with the file-key signer', () => {
  it('makes the same bytes as web3.js Transaction.sign (ed25519 signatures are deterministic)', async () => {
    const reference = new Transaction({ feePayer: authority.publicKey, blockhash, lastValidBlockHeight: 7 }).add(...instructions);
    reference.sign(authority);
    const signed = await signTransaction(new FileKeySigner(authority), instructions, blockhash, 7);
    expect(Buffer.from(signed.wire).equals(reference.serialize())).toBe(true);
    expect(Buffer.from(signed.signature).equals(reference.signature!)).toBe(true);
  });

  it('refuses a signature that does not verify against the public key the signer shows', async () => {
    const other = new FileKeySigner(Keypair.generate());
    const lying: AuthoritySigner = { publicKey: authority.publicKey, sign: (message) => other.sign(message), describe: () => ({ kind: 'file' }) };
    await expect(signTransaction(lying, instructions, blockhash, 7)).rejects.toThrow(
      /^keypair file: the signature returned does not verify with the authority's public key/,
    );
  });

  it('shows no key material when serialized', () => {
    const text = JSON.stringify({ signer: new FileKeySigner(authority) });
    expect(text).toContain(authority.publicKey.toBase58());
    expect(text).not.toContain(Buffer.from(authority.secretKey.subarray(0, 32)).toString('hex'));
    expect(new FileKeySigner(authority).describe()).toEqual({ kind: 'file' });
  });
});
