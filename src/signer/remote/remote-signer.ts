import { randomBytes } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import { isBridgeError } from '../../errors.js';
import { KEY_SERVICE_NAMES, type AuthoritySigner, type KeyServiceKind, type SignerDescription, type SignerObserver } from '../authority-signer.js';
import { firstLine, signerFailure } from '../signer-failure.js';
import { verifiedSignature } from '../verified-signature.js';

/**
 * The authority key inside a key service (AWS KMS, Google Cloud KMS, Vault transit): the private
 * key never leaves it, and this process asks it for each signature over HTTPS.
 *
 * Nothing the service answers is taken on its word: its public key must be a 32-byte Ed25519
 * key, the pair is proved with one verified signature at start, and every signature is
 * verified before a transaction carries it (../verified-signature.ts: a wrong signature is
 * `key_mismatch`, never a transaction). Every call is cut after
 * KEY_SERVICE_CALL_TIMEOUT_MS (the SDK's own retries are off: the crank's attempts,
 * BRIDGE_CRANK_MAX_ATTEMPTS, are the one retry loop), and a cut call is `service_unavailable`,
 * which the failure policy tries again.
 */

export const KEY_SERVICE_CALL_TIMEOUT_MS = 10_000;

/** One key in one service, as each platform's client reaches it. */
export interface KeyService {
  readonly description: { kind: KeyServiceKind; key: string };
  /** The raw 32-byte Ed25519 public key the service reports, or a SIGNER__UNAVAILABLE saying why not. */
  publicKey(signal: AbortSignal): Promise<Uint8Array>;
  /** The service's signature over `message` (the message itself, not a digest). */
  sign(message: Uint8Array, signal: AbortSignal): Promise<Uint8Array>;
  /** Where the service reports its token renewals (Vault). */
  observe?(observer: SignerObserver): void;
}

/** Reads the service's public key and proves the pair with one verified signature; throws SIGNER__UNAVAILABLE. */
export async function openRemoteSigner(service: KeyService, timeoutMs = KEY_SERVICE_CALL_TIMEOUT_MS): Promise<AuthoritySigner> {
  const name = KEY_SERVICE_NAMES[service.description.kind];
  const raw = await bounded(name, 'reading the public key', timeoutMs, (signal) => service.publicKey(signal));
  if (raw.length !== 32) throw signerFailure(name, 'not_ed25519', `the public key is ${raw.length} bytes, not an Ed25519 key's 32`);
  const signer = new RemoteSigner(service, name, new PublicKey(raw), timeoutMs);
  await verifiedSignature(signer, randomBytes(32));
  return signer;
}

class RemoteSigner implements AuthoritySigner {
  readonly publicKey: PublicKey;
  readonly #service: KeyService;
  readonly #name: string;
  readonly #timeoutMs: number;
  /** Only a service that reports something (Vault's token renewals) is observed. */
  readonly observe?: (observer: SignerObserver) => void;

  constructor(service: KeyService, name: string, publicKey: PublicKey, timeoutMs: number) {
    this.#service = service;
    if (service.observe !== undefined) this.observe = (observer) => service.observe!(observer);
    this.#timeoutMs = timeoutMs;
    this.#name = name;
    this.publicKey = publicKey;
  }

  sign(message: Uint8Array): Promise<Uint8Array> {
    return bounded(this.#name, 'signing', this.#timeoutMs, (signal) => this.#service.sign(message, signal));
  }

  describe(): SignerDescription {
    return this.#service.description;
  }

  toJSON(): string {
    return `RemoteSigner(${this.#name}, ${this.publicKey.toBase58()})`;
  }
}

async function bounded<T>(name: string, what: string, timeoutMs: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(signerFailure(name, 'service_unavailable', `${what} took longer than ${timeoutMs} ms`));
    }, timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([call(controller.signal), timeout]);
  } catch (err) {
    if (isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
    throw signerFailure(name, 'service_unavailable', `${what} failed (${firstLine(err)})`, err);
  } finally {
    clearTimeout(timer);
  }
}
