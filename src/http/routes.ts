import type { FastifyInstance, FastifyReply, FastifySchemaCompiler } from 'fastify';
import type * as z from 'zod';
import type { CrankService } from '../machines/crank-service.js';
import { shareReads } from '../transfers/shared-reads.js';
import { parseParameters } from '../transfers/transfer-params.js';
import {
  transferIndexParams,
  transferPageParams,
  type TransferIndexParams,
  type TransferPageParams,
  type TransferQueries,
} from '../transfers/transfer-queries.js';
import type { Metrics } from '../metrics/metrics.js';
import { refuseUnexpectedHosts, type HostPolicy } from './allowed-hosts.js';
import { requireAdminAuth, type AdminCredentials } from './auth.js';
import { registerCrankUi } from './crank-ui.js';
import { refuseCrossSite } from './cross-site.js';
import { createRpcOutageLog } from './rpc-outage.js';
import { transferPageBody } from './transfer-page-body.js';
import { createMetricsRender, METRICS_ANSWERS_PER_SECOND } from './metrics-render.js';
import { createPace, createTransferPace } from './transfer-pace.js';
import { crankReportResponseSchema, healthSchema, killSchema, pollSchema } from './schemas.js';
import { auditAdminRequests } from './audit.js';

/**
 * The four endpoints of SPEC §4, plus POST /crank/poll (the machine's POLL event) and the crank
 * page (crank-ui.ts). A 404 answer lists them in the order they are registered here (route-table.ts).
 */

const SERVICE_NAME = 'bridge-operator-server';

export function registerPublicRoutes(app: FastifyInstance, { crank, metrics }: { crank: CrankService; metrics: Metrics }): void {
  // A snapshot: never waits for a running cycle. 503 only for `stalled`, the state a restart
  // fixes, so that a liveness probe restarts exactly then (docs/http-api.md "GET /health").
  app.get('/health', { schema: { response: { 200: healthSchema, 503: healthSchema } } }, async (_request, reply) => {
    const { status, crank: crankHealth } = crank.report();
    return reply.code(status === 'stalled' ? 503 : 200).send({ status, service: SERVICE_NAME, crank: crankHealth });
  });

  // Rendered at most once a second, answered at most METRICS_ANSWERS_PER_SECOND times a second, whoever asks (metrics-render.ts).
  const renderMetrics = createMetricsRender(metrics.registry);
  const metricsPace = createPace({ perSecond: METRICS_ANSWERS_PER_SECOND });
  app.get('/metrics', async (_request, reply) => {
    await metricsPace.turn(clientGone(reply));
    return reply.type(metrics.registry.contentType).send(await renderMetrics());
  });
}

export interface AdminRouteDependencies {
  crank: CrankService;
  /** Read-only transfer views (GET /transfers); refuses with CRANK__DISABLED without runtime configuration. */
  transfers: TransferQueries;
  auth: AdminCredentials | undefined;
  /** Which Host names admin requests may carry (DNS rebinding). */
  hosts: HostPolicy;
  onKill: () => void;
  /** Distinct transfer reads begun per second (src/transfers/shared-reads.ts); TRANSFER_READS_PER_SECOND unless a test sets another. */
  transferReadsPerSecond?: number;
}

export async function registerAdminRoutes(
  admin: FastifyInstance,
  { crank, transfers, auth, hosts, onKill, transferReadsPerSecond }: AdminRouteDependencies,
): Promise<void> {
  auditAdminRequests(admin, auth !== undefined);
  refuseUnexpectedHosts(admin, hosts);
  refuseCrossSite(admin);
  if (auth !== undefined) await requireAdminAuth(admin, auth);
  neverCached(admin);

  // The crank queues the request behind a running cycle and answers with its own cycle's report.
  admin.post('/crank/once', { schema: { response: { 200: crankReportResponseSchema } } }, async (_request, reply) => ({
    ...(await crank.runOnce(clientGone(reply))),
    ...crank.role(),
  }));

  // A nudge, not a cycle request: answered at once, the cycle's outcome shows in /health.
  admin.post('/crank/poll', { schema: { response: { 202: pollSchema } } }, async (_request, reply) =>
    reply.code(202).send({ status: crank.poll(), ...crank.role() }),
  );

  admin.post('/kill', {
    schema: { response: { 202: killSchema } },
    // Runs once the answer is flushed. Route hooks also run after a refused request (401): only
    // an accepted kill shuts down.
    onResponse: async (request, reply) => {
      if (reply.statusCode !== 202) return;
      request.log.info('shutdown requested by POST /kill');
      onKill();
    },
    handler: async (_request, reply) => reply.code(202).send({ status: 'shutting_down', message: 'graceful shutdown started' }),
  });

  // Read-only, paginated: one bounded chain read per request at most, its encoded answer shared
  // between requests (src/transfers/shared-reads.ts); answers paced in all
  // (transfer-pace.ts), each page bounded (transfer-page-body.ts).
  const outage = createRpcOutageLog();
  const pace = createTransferPace();
  const answers = shareReads<Buffer>(transferReadsPerSecond === undefined ? {} : { readsPerSecond: transferReadsPerSecond });
  const json = (body: Buffer, reply: FastifyReply) => reply.type('application/json; charset=utf-8').send(body);
  admin.setValidatorCompiler(parseWithSchema);
  admin.get<{ Querystring: TransferPageParams }>('/transfers', { schema: { querystring: transferPageParams } }, async (request, reply) => {
    const gone = clientGone(reply);
    await pace.turn(gone);
    const { from, limit } = request.query;
    const read = async (signal: AbortSignal) => {
      const page = await transfers.page(request.query, signal);
      return transferPageBody({ ...page, flow_held: crank.health().watchdog?.flow_held ?? null }, signal);
    };
    return json(await outage.watch(answers(`page:${from}:${limit}`, read, gone), request.log), reply);
  });
  admin.get<{ Params: TransferIndexParams }>('/transfers/:index', { schema: { params: transferIndexParams } }, async (request, reply) => {
    const gone = clientGone(reply);
    await pace.turn(gone);
    const { index } = request.params;
    const read = async (signal: AbortSignal) => Buffer.from(JSON.stringify(await transfers.transfer(index, signal)));
    return json(await outage.watch(answers(`transfer:${index}`, read, gone), request.log), reply);
  });

  await registerCrankUi(admin, crank);
}

/**
 * The admin routes' query and path schemas are zod schemas: parsed, not only checked, so that a
 * handler receives numbers, and a refusal is the TRANSFER__INVALID_PARAMETER naming the parameter
 * that the error handler answers 400 `invalid_parameter` with.
 */
const parseWithSchema: FastifySchemaCompiler<z.ZodType> =
  ({ schema }) =>
  (raw) => {
    try {
      return { value: parseParameters(schema, raw) };
    } catch (error) {
      return { error: error as Error };
    }
  };

/**
 * Admin answers (the crank page and its assets included) carry operator data: no cache may keep
 * them. Set in onSend, after @fastify/static has set its own `public, max-age=0`.
 */
function neverCached(admin: FastifyInstance): void {
  admin.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });
}

/**
 * Aborts when the client closes the connection before its answer was sent: a request still
 * queued behind a running cycle then leaves the queue (the cycles themselves run regardless).
 */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new ClientClosedRequest());
  });
  return controller.signal;
}

/** nginx's 499: nobody is left to read the answer; logged, not sent. */
class ClientClosedRequest extends Error {
  readonly statusCode = 499;
  constructor() {
    super('the client closed the connection before its crank report was ready');
  }
}
