import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CRANK_UI_POLLED_PATHS } from './crank-ui.js';
import { quotedHeader, quotedUrl } from './quoted-request.js';

/**
 * Who asked for what (docs/operating.md "The watchdog", audit): one `audit` line per admin
 * request, refused ones included, written when its answer is sent: the remote address, the
 * Basic auth user name of an authenticated request (never the password), what (method and URL)
 * and the outcome (the status code). A refused request's user is null: what was typed as a name
 * may be the password in the wrong field (a swap), and a log must never hold it; the address
 * says who tried. The crank page's own polls and assets are the page load's
 * (CRANK_UI_POLLED_PATHS): one line for the page, not one a second while it is open.
 * `npm run ops -- audit` prints these lines back from a log.
 */

const AUDIT_MESSAGE = 'audit';

export function auditAdminRequests(admin: FastifyInstance, authenticated: boolean): void {
  admin.addHook('onResponse', async (request, reply) => {
    if (CRANK_UI_POLLED_PATHS.has(request.routeOptions.url ?? '')) return;
    const user = authenticated && reply.statusCode !== 401 ? basicUser(request) : null;
    request.log.info(
      { audit: { address: request.ip, user, what: `${request.method} ${quotedUrl(request.url)}`, outcome: reply.statusCode } },
      AUDIT_MESSAGE,
    );
  });
}

/** The user name of a Basic Authorization header (RFC 7617: up to the first colon); the password part is never kept. */
function basicUser(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (match === null) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : quotedHeader(decoded.slice(0, colon));
}
