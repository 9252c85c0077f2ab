import type { ConfigProblem } from './signer-failure.js';

/**
 * The `name=value` lists of the signer URIs in BRIDGE_AUTHORITY_KEYPAIR (pkcs11-uri.ts,
 * key-service-uri.ts): an attribute not known, or given twice, is refused rather than ignored
 * (a typo must not select another key). A query's names are never quoted: an unencoded `&` in a
 * PIN turns the PIN's tail into a "name".
 */

export interface AttributeList {
  separator: string;
  known: readonly string[];
  /** `path` (names quoted in problems) or `query` (names never quoted). */
  part: 'path' | 'query';
  problem: ConfigProblem;
}

/** Names lower-cased and percent-decoded; values as written (each attribute decodes its own). */
export function parseAttributes(text: string, list: AttributeList): Map<string, string> {
  const found = new Map<string, string>();
  if (text === '') return found;
  const { separator, known, part, problem } = list;
  for (const pair of text.split(separator)) {
    const equals = pair.indexOf('=');
    const name = percentDecode(equals === -1 ? pair : pair.slice(0, equals), 'an attribute name', problem).toLowerCase();
    const named =
      part === 'path'
        ? `${part} attribute ${JSON.stringify(name)}`
        : `an attribute of the query (not quoted: a query may hold a secret; percent-encode & as %26 inside a value)`;
    if (equals === -1) throw problem(`${named} has no value (expected name=value)`);
    if (!known.includes(name))
      throw problem(`${part === 'path' ? `unsupported ${named}` : `${named} is not supported`}; supported: ${known.join(', ')}`);
    if (found.has(name)) throw problem(`${name} is given twice`);
    found.set(name, pair.slice(equals + 1));
  }
  return found;
}

/** RFC 3986 percent-decoding to UTF-8 text; never quotes the text, which may be a secret. */
export function percentDecode(text: string, attribute: string, problem: ConfigProblem): string {
  const bytes = percentDecodeBytes(text, attribute, problem);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw problem(`${attribute} is not UTF-8 once percent-decoded`);
  }
}

export function percentDecodeBytes(text: string, attribute: string, problem: ConfigProblem): Uint8Array {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '%') {
      bytes.push(...Buffer.from(text[i]!, 'utf8'));
      continue;
    }
    const hex = text.slice(i + 1, i + 3);
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw problem(`${attribute} has a malformed percent-encoding (% must be followed by two hex digits)`);
    bytes.push(Number.parseInt(hex, 16));
    i += 2;
  }
  return Uint8Array.from(bytes);
}

/** The path of a `file:` source attribute (pin-source, token-source): an absolute path, with or without `file:` or `file://`. */
export function fileSourcePath(source: string, attribute: string, problem: ConfigProblem): string {
  const path = source.replace(/^file:(\/\/(?=\/))?/, '');
  if (!path.startsWith('/')) throw problem(`${attribute} must be a file: an absolute path or file:/absolute/path`);
  return path;
}
