import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sendError } from './errors.js';
import { quotedHeader, quotedUrl } from './quoted-request.js';

/**
 * Admin endpoints answer only a Host the operator expects. DNS rebinding: a page on
 * evil.example whose name the attacker re-points at this server's address becomes, for the
 * browser, same-origin with it, and Origin and Sec-Fetch-Site say nothing wrong; only the Host
 * header still names evil.example. Expected are:
 * - `localhost` and `*.localhost` (browsers resolve them to loopback themselves, RFC 6761);
 * - loopback addresses (127.0.0.0/8, ::1, and 127.x as IPv4-mapped IPv6);
 * - the bind address; with a wildcard bind (0.0.0.0, ::) any IP literal, since the server
 *   answers on every address and a rebinding page always names a host name, never an address;
 * - BRIDGE_ALLOWED_HOSTS (an ingress's names).
 * The port is not compared: the socket already decided that. A request without Host (HTTP/1.0)
 * passes: browsers always send one. Public endpoints keep answering any Host.
 */

export interface HostPolicy {
  /** The listen address (BRIDGE_BIND_ADDRESS's host), IPv6 without brackets. */
  bindHost: string;
  /** BRIDGE_ALLOWED_HOSTS, lower-case. */
  allowedHosts: readonly string[];
}

const WILDCARD_BINDS = new Set(['0.0.0.0', '::']);

/** Why `host` (a Host header) is not expected, or undefined when it is. */
export function unexpectedHostReason(host: string | undefined, policy: HostPolicy): string | undefined {
  if (host === undefined) return undefined;
  const name = hostName(host);
  if (name !== undefined && isExpected(name, policy)) return undefined;
  return `Host ${JSON.stringify(quotedHeader(host))} is not a name this server answers admin requests for (the bind address, localhost, a loopback address, or BRIDGE_ALLOWED_HOSTS); if an ingress forwards this name, add it to BRIDGE_ALLOWED_HOSTS`;
}

/** The host part of a Host header as the URL parser canonicalises it (IPv4 forms, case), without brackets or a trailing dot. */
function hostName(host: string): string | undefined {
  if (!URL.canParse(`http://${host}/`)) return undefined;
  const { hostname } = new URL(`http://${host}/`);
  return hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

function isExpected(name: string, { bindHost, allowedHosts }: HostPolicy): boolean {
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) !== 0) return isLoopback(name) || name === bindHost || WILDCARD_BINDS.has(bindHost);
  return name === bindHost.toLowerCase() || allowedHosts.includes(name);
}

function isLoopback(address: string): boolean {
  return /^(?:::ffff:)?127\./.test(address) || address === '::1' || /^::ffff:7f[0-9a-f]{2}:/.test(address);
}

/** Registers the check as the first onRequest hook of `scope` (the admin routes' plugin), before the cross-site check and auth. */
export function refuseUnexpectedHosts(scope: FastifyInstance, policy: HostPolicy): void {
  scope.addHook('onRequest', async (request: FastifyRequest, reply) => {
    const reason = unexpectedHostReason(request.headers.host, policy);
    if (reason === undefined) return;
    request.log.warn({ method: request.method, url: quotedUrl(request.url), reason }, 'admin request refused: unexpected Host');
    await sendError(reply, { statusCode: 421, body: { error: 'misdirected_request', message: reason } });
  });
}
