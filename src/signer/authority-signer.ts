import type { PublicKey } from '@solana/web3.js';

/**
 * The authority key as the chain client sees it: a public key and a way to sign with the
 * private one. The crank never knows where the private key lives: in this process (a Solana CLI
 * keypair file), in a token reached through PKCS#11 or in a key service, where it never leaves
 * the hardware. A signer only answers: what it returns is verified before use (verified-signature.ts).
 */

/** What /health, the ops CLI and the startup line say about the signer: never a PIN or a key byte. */
export type SignerDescription =
  | { kind: 'file' }
  /** `session`: `lost` after a failed signature until the next one re-opens and logs in. */
  | { kind: 'pkcs11'; token: string; session: 'open' | 'lost' }
  /** `key`: the key's id, ARN or alias (AWS), its version's resource name (Google), `mount/key` (Vault). */
  | { kind: KeyServiceKind; key: string };

export type KeyServiceKind = 'aws-kms' | 'gcp-kms' | 'vault-transit';

/** How messages, logs and the ops CLI name each service. */
export const KEY_SERVICE_NAMES: Record<KeyServiceKind, string> = {
  'aws-kms': 'AWS KMS',
  'gcp-kms': 'Google Cloud KMS',
  'vault-transit': 'Vault transit',
};

/** How a failure names the signer (SIGNER__UNAVAILABLE's `signer`): `keypair file`, `PKCS#11` or the key service's name. */
export function signerName(description: SignerDescription): string {
  if (description.kind === 'file') return 'keypair file';
  return description.kind === 'pkcs11' ? 'PKCS#11' : KEY_SERVICE_NAMES[description.kind];
}

export interface AuthoritySigner {
  readonly publicKey: PublicKey;
  /** The 64-byte Ed25519 signature of `message`. */
  sign(message: Uint8Array): Promise<Uint8Array>;
  describe(): SignerDescription;
  /** Where the signer reports what happens beside its signatures, from this call on (the server's logger exists only after the signer was proved). */
  observe?(observer: SignerObserver): void;
}

/** `failed`: a lookup or renewal refused or unanswered; `not_extended`: the token's max TTL is reached. */
export const TOKEN_RENEWAL_OUTCOMES = ['renewed', 'not_extended', 'failed'] as const;
export type TokenRenewalOutcome = (typeof TOKEN_RENEWAL_OUTCOMES)[number];

export interface SignerObserver {
  /** A key service's token renewal; `detail` says why one failed, never with the token. */
  tokenRenewal(outcome: TokenRenewalOutcome, detail?: string): void;
}
