import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sendError } from './errors.js';
import { quotedHeader, quotedUrl } from './quoted-request.js';

/**
 * Admin endpoints refuse requests a browser makes on behalf of another site. A page on
 * evil.example can make the operator's browser POST to this server (a "simple" request needs no
 * preflight), and a browser that has cached the Basic-auth credentials sends them along, so auth
 * alone does not stop it. Browsers say where a request comes from: `Sec-Fetch-Site` (anything
 * but `same-origin`, or `none` for a typed URL or bookmark, is another site) and `Origin` (its
 * host must be the Host the request was sent to, its scheme the one the request came over: an
 * http page on the operator's host name is not the https one). curl, the ops CLI and probes send neither
 * header and pass.
 */

const ALLOWED_FETCH_SITES = new Set(['same-origin', 'none']);

/** Why a request is cross-site, or undefined when it is not. */
export function crossSiteReason(headers: FastifyRequest['headers']): string | undefined {
  const fetchSite = headers['sec-fetch-site'];
  if (typeof fetchSite === 'string' && !ALLOWED_FETCH_SITES.has(fetchSite)) {
    return `Sec-Fetch-Site is ${JSON.stringify(quotedHeader(fetchSite))}, not same-origin`;
  }
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  const host = headers.host;
  if (!URL.canParse(origin)) return `Origin ${JSON.stringify(quotedHeader(origin))} is not a URL (a sandboxed or opaque page)`;
  const parsed = new URL(origin);
  if (host === undefined || parsed.host !== host.toLowerCase()) {
    return `Origin ${quotedHeader(parsed.origin)} is not this server (Host ${JSON.stringify(quotedHeader(host ?? ''))})`;
  }
  const scheme = requestScheme(headers);
  if (parsed.protocol !== `${scheme}:`) return `Origin ${quotedHeader(parsed.origin)} is not this server (the request came over ${scheme})`;
  return undefined;
}

/**
 * The scheme the browser used: plain http, unless a TLS-terminating ingress says https in
 * X-Forwarded-Proto. A page cannot add that header to a cross-site request without a CORS
 * preflight, which this server never grants.
 */
function requestScheme(headers: FastifyRequest['headers']): string {
  const forwarded = headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',', 1)[0]?.trim().toLowerCase();
  return first === 'https' ? 'https' : 'http';
}

/** Registers the check as the first onRequest hook of `scope` (the admin routes' plugin), before auth. */
export function refuseCrossSite(scope: FastifyInstance): void {
  scope.addHook('onRequest', async (request, reply) => {
    const reason = crossSiteReason(request.headers);
    if (reason === undefined) return;
    request.log.warn({ method: request.method, url: quotedUrl(request.url), reason }, 'admin request refused: cross-site');
    await sendError(reply, {
      statusCode: 403,
      body: { error: 'cross_site_request', message: `admin endpoints refuse cross-site requests: ${reason}` },
    });
  });
}
