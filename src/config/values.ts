import { isIP } from 'node:net';
import bs58 from 'bs58';
import * as z from 'zod';

/**
 * Strict zod schemas for one environment value each. Every schema takes the raw string and
 * reports a problem that says what was expected and what was found, so the line printed at
 * startup (`VARIABLE: problem`) is enough to fix the setting. Values that may carry secrets
 * (RPC URLs often embed an API key) are described, never echoed.
 */

const DIGITS = /^[0-9]+$/;
const U64_MAX = 2n ** 64n - 1n;
const MAX_ECHO_LENGTH = 80;

/** A raw value as it appears in a problem line: quoted, shortened when long. */
function quote(raw: string): string {
  const shown = raw.length > MAX_ECHO_LENGTH ? `${raw.slice(0, MAX_ECHO_LENGTH)}...` : raw;
  return JSON.stringify(shown);
}

/**
 * A decimal integer in `min..max`: digits only (no sign, exponent, decimal point, spaces or
 * trailing garbage), compared as bigint so that no value loses precision before the check.
 */
export function integerValue(min: bigint, max: bigint, expected = `an integer ${min}..${max}`) {
  return z.string().transform((raw, ctx) => {
    const value = DIGITS.test(raw) ? BigInt(raw) : undefined;
    if (value === undefined || value < min || value > max) {
      ctx.addIssue(`expected ${expected}, got ${quote(raw)}`);
      return z.NEVER;
    }
    return value;
  });
}

export const u16Value = () => integerValue(0n, 65535n).transform(Number);

/**
 * A u64 duration that must fit a JavaScript number after scaling to milliseconds: values above
 * Number.MAX_SAFE_INTEGER ms (about 285,000 years) are rejected rather than rounded.
 */
export function u64DurationValue(unit: 'seconds' | 'milliseconds') {
  const msPerUnit = unit === 'seconds' ? 1000n : 1n;
  const maxUnits = BigInt(Number.MAX_SAFE_INTEGER) / msPerUnit;
  return integerValue(0n, U64_MAX, 'an unsigned 64-bit integer').transform((value, ctx) => {
    if (value > maxUnits) {
      ctx.addIssue(`${value} ${unit} is above the supported maximum of ${maxUnits} ${unit} (about 285,000 years)`);
      return z.NEVER;
    }
    return Number(value * msPerUnit);
  });
}

/** An http(s) URL. The value is not echoed: RPC provider URLs often carry an API key. */
export const rpcUrlValue = () =>
  z.string().transform((raw, ctx) => {
    const url = parseUrl(raw);
    if (url === undefined) {
      ctx.addIssue('expected an http:// or https:// URL, got a value that does not parse as a URL');
      return z.NEVER;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      ctx.addIssue(`expected an http:// or https:// URL, got one with scheme "${url.protocol}"`);
      return z.NEVER;
    }
    if (hasCredentials(url)) {
      ctx.addIssue(CREDENTIALS_PROBLEM);
      return z.NEVER;
    }
    return url.href;
  });

/**
 * fetch refuses to build a request from a URL with `user:password@`: every request would fail
 * as a network error and the endpoint would look merely down. Refused at start instead.
 */
const CREDENTIALS_PROBLEM =
  'the URL carries credentials (user:password@host), which the RPC client cannot send; use the key in the path or query as your provider documents, or an authenticating proxy';

function hasCredentials(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

/**
 * A comma-separated list of http(s) URLs, each validated like `rpcUrlValue`; empty means none.
 * A problem names the entry's position (1-based), never its value.
 */
export const rpcUrlListValue = () =>
  z.string().transform((raw, ctx) => {
    const entries = raw.trim() === '' ? [] : raw.split(',').map((entry) => entry.trim());
    const urls: string[] = [];
    entries.forEach((entry, index) => {
      const url = parseUrl(entry);
      if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        const got = url === undefined ? 'a value that does not parse as a URL' : `one with scheme "${url.protocol}"`;
        ctx.addIssue(`entry ${index + 1}: expected an http:// or https:// URL, got ${got}`);
        return;
      }
      if (hasCredentials(url)) {
        ctx.addIssue(`entry ${index + 1}: ${CREDENTIALS_PROBLEM}`);
        return;
      }
      urls.push(url.href);
    });
    return urls;
  });

export const websocketUrlValue = () =>
  z.string().transform((raw, ctx) => {
    const url = parseUrl(raw);
    if (url === undefined || (url.protocol !== 'ws:' && url.protocol !== 'wss:')) {
      // Only the scheme is echoed: an inspector URL may carry a token in its path or query.
      const scheme = url === undefined ? 'a value that does not parse as a URL' : `one with scheme "${url.protocol}"`;
      ctx.addIssue(`expected a ws:// or wss:// URL, got ${scheme}`);
      return z.NEVER;
    }
    return url.href;
  });

function parseUrl(raw: string): URL | undefined {
  return URL.canParse(raw) ? new URL(raw) : undefined;
}

/** A base58 string that decodes to exactly 32 bytes (a Solana public key). */
export const publicKeyValue = () =>
  z.string().refine(isBase58Key, { error: (issue) => `expected a base58 32-byte public key, got ${quote(String(issue.input))}` });

/** A comma-separated list of base58 public keys, each once; empty means none. A problem names the entry's position (1-based). */
export const publicKeyListValue = () =>
  z.string().transform((raw, ctx) => {
    const entries = raw.trim() === '' ? [] : raw.split(',').map((entry) => entry.trim());
    entries.forEach((entry, index) => {
      if (!isBase58Key(entry)) ctx.addIssue(`entry ${index + 1}: expected a base58 32-byte public key, got ${quote(entry)}`);
      else if (entries.indexOf(entry) < index) ctx.addIssue(`entry ${index + 1}: ${entry} is listed twice`);
    });
    return entries;
  });

function isBase58Key(raw: string): boolean {
  try {
    return bs58.decode(raw).length === 32;
  } catch {
    return false;
  }
}

export function enumValue<const T extends readonly [string, ...string[]]>(values: T) {
  return z.string().refine((raw): raw is T[number] => values.includes(raw), {
    error: (issue) => `expected one of ${values.join(', ')}, got ${quote(String(issue.input))}`,
  });
}

/** Strictly `true` or `false`: a typo such as `yes` or `1` is an error, not a silent default. */
export const booleanValue = () => enumValue(['true', 'false'] as const).transform((raw) => raw === 'true');

export interface BindAddress {
  /** Host as `listen` takes it: IPv6 without brackets. */
  host: string;
  port: number;
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const BIND_ADDRESS = /^(?:\[([^\]]+)\]|([^:[\]]+)):([^:]*)$/;

/** `host:port` or `[ipv6]:port`, port 0..65535 (0 picks a free port). */
export const bindAddressValue = () =>
  z.string().transform((raw, ctx): BindAddress => {
    const match = BIND_ADDRESS.exec(raw);
    const ipv6 = match?.[1];
    const host = ipv6 ?? match?.[2];
    const portText = match?.[3] ?? '';
    const hostValid = ipv6 !== undefined ? isIP(ipv6) === 6 : host !== undefined && (isIP(host) === 4 || HOSTNAME.test(host));
    const port = DIGITS.test(portText) ? Number(portText) : -1;
    if (host === undefined || !hostValid || port < 0 || port > 65535) {
      ctx.addIssue(`expected host:port or [ipv6]:port with a port 0..65535, got ${quote(raw)}`);
      return z.NEVER;
    }
    return { host, port };
  });

/**
 * BRIDGE_ALLOWED_HOSTS: comma-separated host names (no port, no scheme), lower-cased; empty
 * means none. A problem names the entry's position and quotes it (a host name is no secret).
 */
export const hostNameListValue = () =>
  z.string().transform((raw, ctx) => {
    const entries = raw.trim() === '' ? [] : raw.split(',').map((entry) => entry.trim());
    entries.forEach((entry, index) => {
      if (!HOSTNAME.test(entry))
        ctx.addIssue(`entry ${index + 1}: expected a host name such as bridge.example.com (no scheme, no port), got ${quote(entry)}`);
    });
    return entries.map((entry) => entry.toLowerCase());
  });
