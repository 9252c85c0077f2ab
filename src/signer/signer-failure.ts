import { BridgeError, type SignerFailure } from '../errors.js';
import { escapeUnsafeCharacters } from '../text.js';

/**
 * The one way every signer (a PKCS#11 token, a key service) reports a failure. A module's or a
 * service's own words end up on a terminal (the startup line, `ops`) and in /health: one line
 * (line breaks become spaces), the other control characters escaped, never printed.
 */

export function signerFailure(name: string, reason: SignerFailure, message: string, cause?: unknown): BridgeError<'SIGNER__UNAVAILABLE'> {
  return new BridgeError('SIGNER__UNAVAILABLE', { reason }, { signer: name, detail: printableLine(message) }, cause === undefined ? undefined : { cause });
}

/** A service's words as one printable line: line breaks become spaces, the other control characters escaped. */
export function printableLine(text: string): string {
  return escapeUnsafeCharacters(text.replace(/[\r\n]+/g, ' '));
}

/** An error's first line, cut: a module's or service's message, never a credential (the clients do not put them in errors). */
export function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.slice(0, 200);
}
