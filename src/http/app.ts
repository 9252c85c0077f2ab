import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import { MAX_CONNECTIONS } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import type { CrankService } from '../machines/crank-service.js';
import type { TransferQueries } from '../transfers/transfer-queries.js';
import type { Metrics } from '../metrics/metrics.js';
import type { HostPolicy } from './allowed-hosts.js';
import type { AdminCredentials } from './auth.js';
import { answerClientError } from './client-errors.js';
import { CONNECTIONS_CHECK_INTERVAL_MS, HEADERS_TIMEOUT_MS, limitConnections } from './connections.js';
import { CRANK_UI_POLLED_PATHS } from './crank-ui.js';
import { errorResponse, isServerFault, logRequestError, sendError, statusCodeName, type ErrorResponse } from './errors.js';
import { quotedUrl } from './quoted-request.js';
import { routeTable } from './route-table.js';
import { registerAdminRoutes, registerPublicRoutes } from './routes.js';

/**
 * The HTTP surface of SPEC §4, built from its dependencies and never from process.env, so tests
 * build as many apps as they like. Listening and shutdown belong to the process (src/index.ts).
 */

/** No endpoint takes a body (SPEC §4); a small one is read and ignored, a larger one refused. */
export const MAX_BODY_BYTES = 1024;

/**
 * Limits of the HTTP server (docs/http-api.md, "HTTP limits"). A request must arrive whole (headers and
 * body) within REQUEST_TIMEOUT_MS; Node checks every CONNECTIONS_CHECK_INTERVAL_MS (1 s), so a
 * trickling client is cut within 30 to 31 s. This bounds receiving only: a POST /crank/once
 * that waits for its cycle is not affected, which is also why there is no socket idle timeout.
 * An idle keep-alive connection
 * closes after KEEP_ALIVE_TIMEOUT_MS (above the 60 s of common load balancers, so they close
 * first); beyond MAX_CONNECTIONS open connections a new one is closed at once. Headers and
 * per-address bounds: ./connections.ts.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * On every answer, errors and static assets included: browsers must not guess a content type
 * (an answer that quotes input cannot become a script) nor send this server's URLs, which may
 * carry tokens, to other sites.
 */
const SECURITY_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' } as const;

const PUBLIC_PATHS = new Set(['/health', '/metrics']);

export interface AppDependencies {
  crank: CrankService;
  transfers: TransferQueries;
  metrics: Metrics;
  logger: Logger;
  /** Undefined: admin endpoints are open and the ingress must keep them private (SPEC §5). */
  auth: AdminCredentials | undefined;
  /** Which Host names admin requests may carry (./allowed-hosts.ts). */
  hosts: HostPolicy;
  /** BRIDGE_MAX_CONNECTIONS_PER_ADDRESS (./connections.ts). */
  maxConnectionsPerAddress: number;
  /** Called once the 202 answer of POST /kill has been sent. */
  onKill: () => void;
  /** Distinct GET /transfers reads begun per second; TRANSFER_READS_PER_SECOND unless a test sets another (src/transfers/shared-reads.ts). */
  transferReadsPerSecond?: number;
}

export function buildApp(deps: AppDependencies): FastifyInstance {
  // Widened to fastify's logger interface so the instance type is the plain FastifyInstance.
  const loggerInstance: FastifyBaseLogger = deps.logger;
  const app = Fastify({
    loggerInstance,
    // One line per request comes from logResponses below, at a level that depends on the route.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_BODY_BYTES,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    http: { headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS },
    // A path that is not valid percent-encoding never reaches the router: answered here in our shape.
    // Its reply skips the onSend hooks, so it sets the security headers itself.
    frameworkErrors: (err, request, reply) => sendError(reply.headers(SECURITY_HEADERS), frameworkError(err, request)),
    clientErrorHandler: answerClientError(SECURITY_HEADERS, HEADERS_TIMEOUT_MS),
  });
  // A backstop only: limitConnections holds MAX_CONNECTIONS. Node counts a socket until its close
  // is processed, refused ones included, so at its own MAX_CONNECTIONS a client reconnecting in a
  // loop could crowd out the probe the reservation admits.
  app.server.maxConnections = 2 * MAX_CONNECTIONS;
  limitConnections(app.server, { maxPerAddress: deps.maxConnectionsPerAddress, maxConnections: MAX_CONNECTIONS }, deps.logger);
  securityHeaders(app);
  ignoreBodies(app);
  closeConnectionsWhenClosing(app);
  handleErrors(app, routeTable(app));
  logResponses(app);
  registerPublicRoutes(app, deps);
  // Its own plugin scope, so that the auth hook covers the admin routes only.
  void app.register(async (admin) => registerAdminRoutes(admin, deps));
  if (deps.auth === undefined) {
    deps.logger.warn(
      'admin endpoints (POST /crank/once, POST /crank/poll, POST /kill, GET /transfers, GET /crank/ui) have no authentication: they rely on ingress restriction (SPEC §5)',
    );
  }
  return app;
}

/**
 * Accepts any content type, including `application/json` with an empty body (which fastify's
 * JSON parser would answer with 400), reads at most MAX_BODY_BYTES and drops the bytes.
 */
function ignoreBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined));
}

/**
 * fastify answers requests that arrive after close() with `Connection: close`, but a request
 * already in flight keeps its keep-alive connection, and close() then waits for the client to
 * hang up (up to the 72 s keep-alive timeout). Every answer sent once closing began ends its
 * connection, so that shutdown finishes as soon as the last request does.
 */
function closeConnectionsWhenClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
}

function handleErrors(app: FastifyInstance, routes: ReadonlyMap<string, readonly string[]>): void {
  app.setErrorHandler((err, request, reply) => {
    const response = errorResponse(err, request.id, MAX_BODY_BYTES);
    logRequestError(request, err, response.statusCode);
    return sendError(reply, response);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, routeNotFound(request, routes)));
}

function frameworkError(err: FastifyError, request: FastifyRequest): ErrorResponse {
  if (err.code !== 'FST_ERR_BAD_URL') return errorResponse(err, request.id, MAX_BODY_BYTES);
  const path = request.raw.url ?? '';
  return { statusCode: 400, body: { error: 'bad_url', message: `the request path ${JSON.stringify(shorten(path))} is not valid percent-encoding` } };
}

function securityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply) => {
    reply.headers(SECURITY_HEADERS);
  });
}

function routeNotFound(request: FastifyRequest, routes: ReadonlyMap<string, readonly string[]>): ErrorResponse {
  const path = request.url.split('?', 1)[0] ?? request.url;
  const allowed = routes.get(path);
  if (allowed !== undefined) {
    return {
      statusCode: 405,
      headers: { allow: allowed.join(', ') },
      body: { error: statusCodeName(405), message: `${request.method} ${path} is not supported; use ${allowed.join(' or ')}` },
    };
  }
  const listed = [...routes].map(([route, methods]) => `${methods[0]} ${route}`);
  return {
    statusCode: 404,
    body: { error: statusCodeName(404), message: `no route ${request.method} ${shorten(path)}; routes: ${listed.join(', ')}` },
  };
}

function shorten(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}...` : text;
}

/** One line per request; probes and scrapes of public endpoints only at debug level. */
function logResponses(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const fields = { method: request.method, url: quotedUrl(request.url), statusCode: reply.statusCode, responseTimeMs: reply.elapsedTime };
    const path = request.routeOptions.url ?? '';
    if (isServerFault(reply.statusCode)) request.log.error(fields, 'request failed');
    // A browser's first request to the crank page carries no credentials: the 401 asks for them, nothing failed.
    else if (reply.statusCode === 401 && request.headers.authorization === undefined)
      request.log.info(fields, 'admin request without credentials: answered 401, asking for them');
    else if (reply.statusCode === 401) request.log.warn(fields, 'admin request refused: authentication failed');
    else if ((PUBLIC_PATHS.has(path) || CRANK_UI_POLLED_PATHS.has(path)) && reply.statusCode < 400) request.log.debug(fields, 'request completed');
    else request.log.info(fields, 'request completed');
  });
}
