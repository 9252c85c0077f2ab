import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { assertOwnedBy } from '../../../src/chain/codec/accounts.js';
import { DEFAULT_PROGRAM_ID } from '../../../src/chain/codec/layout.js';
import { thrownBridgeError } from './expect-error.js';
import { ACCOUNT } from './hand-bytes.js';

const program = new PublicKey(DEFAULT_PROGRAM_ID);

describe('assertOwnedBy', () => {
  it('accepts an account owned by the configured program', () => {
    expect(() => assertOwnedBy(ACCOUNT, new PublicKey(DEFAULT_PROGRAM_ID), program)).not.toThrow();
  });

  it('rejects another owner with CHAIN__INVALID_OWNER naming the account and both owners', () => {
    const other = Keypair.generate().publicKey;
    const error = thrownBridgeError(() => assertOwnedBy(ACCOUNT, other, program), 'CHAIN__INVALID_OWNER');
    expect(error.context).toEqual({ account: ACCOUNT, expected: DEFAULT_PROGRAM_ID, actual: other.toBase58() });
    expect(error.message).toContain(ACCOUNT);
    expect(error.message).toContain(other.toBase58());
  });
});
