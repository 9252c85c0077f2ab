import type { BridgeError } from '../../errors.js';
import { configProblem } from '../signer-failure.js';
import { fileSourcePath, parseAttributes, percentDecode, percentDecodeBytes } from '../uri-attributes.js';

/**
 * BRIDGE_AUTHORITY_KEYPAIR as a PKCS#11 URI (RFC 7512):
 * `pkcs11:token=bridge;object=authority?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/secrets/pin`.
 * Path attributes select the token (`token`, `serial`, `slot-id`) and the key (`object`, `id`);
 * query attributes name the module (`module-path`, required) and the PIN (`pin-source`, a file,
 * or `pin-value`: exactly one). Any other attribute is refused (uri-attributes.ts). Problems
 * never quote the URI's query: it may hold the PIN.
 */

const SCHEME = 'pkcs11:';
const PATH_ATTRIBUTES = ['token', 'object', 'id', 'serial', 'slot-id', 'type'] as const;
const QUERY_ATTRIBUTES = ['module-path', 'pin-source', 'pin-value'] as const;

/** Which token and key: every attribute present must match. */
interface Pkcs11Selection {
  token?: string;
  object?: string;
  id?: Uint8Array;
  serial?: string;
  slotId?: number;
}

type Pkcs11Pin = { kind: 'file'; path: string } | { kind: 'value'; value: string };

export interface Pkcs11Uri {
  modulePath: string;
  selection: Pkcs11Selection;
  pin: Pkcs11Pin;
}

export function isPkcs11Uri(value: string): boolean {
  return value.toLowerCase().startsWith(SCHEME);
}

export function pkcs11UriProblem(problem: string): BridgeError<'CONFIG__INVALID'> {
  return configProblem(`PKCS#11 URI: ${problem}`);
}

/** Throws CONFIG__INVALID with one problem line. */
export function parsePkcs11Uri(uri: string): Pkcs11Uri {
  const rest = uri.slice(SCHEME.length);
  const queryStart = rest.indexOf('?');
  const path = parseAttributes(queryStart === -1 ? rest : rest.slice(0, queryStart), {
    separator: ';',
    known: PATH_ATTRIBUTES,
    part: 'path',
    problem: pkcs11UriProblem,
  });
  const query = parseAttributes(queryStart === -1 ? '' : rest.slice(queryStart + 1), {
    separator: '&',
    known: QUERY_ATTRIBUTES,
    part: 'query',
    problem: pkcs11UriProblem,
  });
  const modulePath = query.get('module-path');
  if (modulePath === undefined || modulePath === '') {
    throw pkcs11UriProblem('module-path is missing; add ?module-path=<the PKCS#11 module (.so) of the token vendor>');
  }
  const type = path.get('type');
  if (type !== undefined && type !== 'private') throw pkcs11UriProblem(`type=${type} cannot sign; leave type out or use type=private`);
  return { modulePath, selection: selection(path), pin: pin(query) };
}

function selection(path: Map<string, string>): Pkcs11Selection {
  const result: Pkcs11Selection = {};
  const token = path.get('token');
  const object = path.get('object');
  const id = path.get('id');
  const serial = path.get('serial');
  const slotId = path.get('slot-id');
  if (token !== undefined) result.token = decode(token, 'token');
  if (object !== undefined) result.object = decode(object, 'object');
  if (id !== undefined) result.id = decodeBytes(id, 'id');
  if (serial !== undefined) result.serial = decode(serial, 'serial');
  if (slotId !== undefined) result.slotId = slotNumber(decode(slotId, 'slot-id'));
  if (result.object === undefined && result.id === undefined) {
    throw pkcs11UriProblem('names no key; add object=<the key label> or id=<its CKA_ID, percent-encoded>');
  }
  return result;
}

function slotNumber(text: string): number {
  if (!/^\d{1,10}$/.test(text) || Number(text) > 0xffff_ffff) throw pkcs11UriProblem('slot-id is not a decimal slot number');
  return Number(text);
}

/** `pin-source` is a file (`file:/path`, `file:///path` or an absolute path); `pin-value` the PIN itself. */
function pin(query: Map<string, string>): Pkcs11Pin {
  const source = query.get('pin-source');
  const value = query.get('pin-value');
  if (source !== undefined && value !== undefined)
    throw pkcs11UriProblem('gives both pin-source and pin-value; keep one (pin-source, a mounted secret file)');
  if (value !== undefined) return { kind: 'value', value: decode(value, 'pin-value') };
  if (source === undefined) throw pkcs11UriProblem('gives no PIN; add pin-source=file:<a mounted secret file holding the PIN>');
  const decoded = decode(source, 'pin-source');
  return { kind: 'file', path: fileSourcePath(decoded, 'pin-source', pkcs11UriProblem) };
}

function decode(text: string, attribute: string): string {
  return percentDecode(text, attribute, pkcs11UriProblem);
}

function decodeBytes(text: string, attribute: string): Uint8Array {
  const bytes = percentDecodeBytes(text, attribute, pkcs11UriProblem);
  if (bytes.length === 0) throw pkcs11UriProblem(`${attribute} is empty`);
  return bytes;
}
