import { Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { BridgeError, isBridgeError } from '../../src/errors.js';
import { retriesAction } from '../../src/failure-policy.js';
import type { AuthoritySigner, SignerDescription } from '../../src/signer/authority-signer.js';
import { FileKeySigner } from '../../src/signer/file-key-signer.js';
import { verifiedSignature } from '../../src/signer/verified-signature.js';

/**
 * docs/key-custody.md, "A signature that does not verify": one check for every way to hold the
 * key, one failure (`key_mismatch`), one decision (not tried again within the cycle), whether
 * the signature came from a key file, a PKCS#11 token or a key service.
 */

const shown = Keypair.fromSeed(new Uint8Array(32).fill(7));
const other = new FileKeySigner(Keypair.fromSeed(new Uint8Array(32).fill(8)));

/** A signer that shows `shown`'s public key but signs with another key, described as `description`. */
function lying(description: SignerDescription): AuthoritySigner {
  return { publicKey: shown.publicKey, sign: (message) => other.sign(message), describe: () => description };
}

const KINDS: Array<[string, SignerDescription, string]> = [
  ['a key file', { kind: 'file' }, 'keypair file'],
  ['a PKCS#11 token', { kind: 'pkcs11', token: 'bridge', session: 'open' }, 'PKCS#11'],
  ['AWS KMS', { kind: 'aws-kms', key: 'alias/bridge' }, 'AWS KMS'],
  ['Google Cloud KMS', { kind: 'gcp-kms', key: 'projects/p/locations/l/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1' }, 'Google Cloud KMS'],
  ['Vault transit', { kind: 'vault-transit', key: 'transit/bridge' }, 'Vault transit'],
];

describe('verifiedSignature: the one check before a signature is used', () => {
  it('returns a signature that verifies, as the signer made it', async () => {
    const message = Uint8Array.from([1, 2, 3]);
    const signer = new FileKeySigner(shown);
    expect(Buffer.from(await verifiedSignature(signer, message)).equals(Buffer.from(await signer.sign(message)))).toBe(true);
  });

  it.each(KINDS)(
    'from %s, a signature that does not verify is key_mismatch, naming the signer, and is never tried again',
    async (_kind, description, name) => {
      const err = await verifiedSignature(lying(description), Uint8Array.from([9])).catch((caught: unknown) => caught);
      expect(isBridgeError(err, 'SIGNER__UNAVAILABLE') && err.context.reason).toBe('key_mismatch');
      expect((err as Error).message).toMatch(
        new RegExp(
          `^${name}: the signature returned does not verify with the authority's public key ${shown.publicKey.toBase58()}; nothing was sent`,
        ),
      );
      expect(retriesAction(err)).toBe(false);
      // As the crank sees it: the failed action's cause (src/chain/client/submit/settle/send-outcome.ts asSubmitFailure).
      const inAction = new BridgeError(
        'CHAIN__FAILED_TO_SUBMIT',
        { chain: 'target', action: 'ack_deposit', outcome: 'failed', landedSignatures: [] },
        { tracker: 'T', reason: (err as Error).message },
        { cause: err },
      );
      expect(retriesAction(inAction)).toBe(false);
    },
  );

  it('a truncated signature does not verify either', async () => {
    const short: AuthoritySigner = {
      publicKey: shown.publicKey,
      sign: async (message) => (await new FileKeySigner(shown).sign(message)).subarray(0, 63),
      describe: () => ({ kind: 'file' }),
    };
    const err = await verifiedSignature(short, Uint8Array.from([1])).catch((caught: unknown) => caught);
    expect(isBridgeError(err, 'SIGNER__UNAVAILABLE') && err.context.reason).toBe('key_mismatch');
  });
});
