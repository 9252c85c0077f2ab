import { BridgeError, type SignerFailure } from '../errors.js';
import { escapeUnsafeCharacters } from '../text.js';

/** The variable every signer's configuration problem names. */
export const AUTHORITY_VARIABLE = 'BRIDGE_AUTHORITY_KEYPAIR';

/** How a signer's configuration is refused, with the part it is about before the text (`PKCS#11 URI: …`). */
export type ConfigProblem = (text: string) => BridgeError<'CONFIG__INVALID'>;

/**
 * The one way a signer's configuration is refused at start: one CONFIG__INVALID line naming
 * BRIDGE_AUTHORITY_KEYPAIR. Never with the value: it may be a key, a PIN or a token.
 */
export function configProblem(text: string): BridgeError<'CONFIG__INVALID'> {
  return new BridgeError('CONFIG__INVALID', { problems: [`${AUTHORITY_VARIABLE}: ${text}`] });
}

/**
 * The one way every signer (a PKCS#11 token, a key service, a key file) reports a failure. A module's or a
 * service's own words end up on a terminal (the startup line, `ops`) and in /health: one line
 * (line breaks become spaces), the other control characters escaped, never printed.
 */

export function signerFailure(name: string, reason: SignerFailure, message: string, cause?: unknown): BridgeError<'SIGNER__UNAVAILABLE'> {
  return new BridgeError(
    'SIGNER__UNAVAILABLE',
    { reason },
    { signer: name, detail: printableLine(message) },
    cause === undefined ? undefined : { cause },
  );
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
