import { pino } from 'pino';

/**
 * Replaces what must never reach a log line, wherever it sits in a logged value: a Keypair (its
 * JSON includes the 64-byte secret) or anything else carrying a `secretKey`, and raw bytes
 * (a secret seed is just a Uint8Array; log addresses and signatures as base58 instead). Errors
 * are serialized first, so a keypair attached to an error or its cause is caught too.
 *
 * Plain objects, arrays and serialized errors are walked; other class instances are left to their
 * own JSON, which keeps request objects and public keys intact for their serializers.
 */

const MAX_DEPTH = 8;
/** pino serializes errors (and errors nested in their fields) into objects of this prototype. */
const SERIALIZED_ERROR_PROTOTYPE: unknown = Object.getPrototypeOf(pino.stdSerializers.err(new Error('probe')));

export function redactSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (ArrayBuffer.isView(value)) return `[redacted ${value.byteLength} bytes]`;
  if (isKeypairLike(value)) return '[redacted keypair]';
  if (depth >= MAX_DEPTH) return '[truncated]';
  if (value instanceof Error) return redactEntries(pino.stdSerializers.err(value), depth);
  if (Array.isArray(value)) return value.map((item: unknown) => redactSecrets(item, depth + 1));
  return isPlainObject(value) ? redactEntries(value, depth) : value;
}

function redactEntries(value: object, depth: number): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = redactSecrets(item, depth + 1);
  return copy;
}

/** A web3.js Keypair (secret behind `_keypair`) or any Signer-shaped `{ publicKey, secretKey }`. */
function isKeypairLike(value: object): boolean {
  return 'secretKey' in value || '_keypair' in value;
}

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null || prototype === SERIALIZED_ERROR_PROTOTYPE;
}
