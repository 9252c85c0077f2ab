import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { buildApp, type AppDependencies } from '../../src/http/app.js';
import type { CrankService } from '../../src/machines/crank-service.js';
import { createDisabledCrank } from '../../src/machines/disabled-crank.js';
import { createDisabledTransferQueries, type TransferQueries } from '../../src/transfers/transfer-queries.js';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.js';
import { captureLogs, type CapturedLogs } from './log-capture.js';

export interface TestApp {
  url: string;
  port: number;
  logs: CapturedLogs;
  metrics: Metrics;
  /** How many times POST /kill asked for shutdown. */
  kills(): number;
  close(): Promise<void>;
}

export interface TestAppOptions {
  crank?: CrankService;
  transfers?: TransferQueries;
  auth?: { username: string; password: string };
  /** BRIDGE_ALLOWED_HOSTS; none by default (the app listens on 127.0.0.1). */
  allowedHosts?: string[];
  /** BRIDGE_MAX_CONNECTIONS_PER_ADDRESS; its default, 32, unless set. */
  maxConnectionsPerAddress?: number;
  /** The metrics the app serves (a crank's, or those its transfer reads count in); a fresh registry's unless given. */
  metrics?: Metrics;
  /** Where the app logs; fresh captured logs at debug unless given. */
  logs?: CapturedLogs;
  /** Distinct GET /transfers reads begun per second; TRANSFER_READS_PER_SECOND unless given. */
  transferReadsPerSecond?: number;
}

/** buildApp's dependencies for a test: the defaults above for whatever `options` leaves out. */
export function testAppDependencies(
  options: TestAppOptions = {},
  onKill: () => void = () => undefined,
): AppDependencies & { logs: CapturedLogs; metrics: Metrics } {
  const logs = options.logs ?? captureLogs('debug');
  const metrics = options.metrics ?? createMetrics(new Registry());
  return {
    crank: options.crank ?? createDisabledCrank(),
    transfers: options.transfers ?? createDisabledTransferQueries(),
    metrics,
    logs,
    logger: logs.logger,
    auth: options.auth,
    hosts: { bindHost: '127.0.0.1', allowedHosts: options.allowedHosts ?? [] },
    maxConnectionsPerAddress: options.maxConnectionsPerAddress ?? 32,
    onKill,
    ...(options.transferReadsPerSecond === undefined ? {} : { transferReadsPerSecond: options.transferReadsPerSecond }),
  };
}

/** The real app from buildApp, listening on 127.0.0.1 on a free port, with captured logs. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  let kills = 0;
  const { logs, ...dependencies } = testAppDependencies(options, () => {
    kills += 1;
  });
  const app = buildApp(dependencies);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    logs,
    metrics: dependencies.metrics,
    kills: () => kills,
    close: () => app.close(),
  };
}

export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Written as given; with `chunked` each string is one chunk of a chunked body. */
  body?: string | string[];
}

/** A request with exactly the given headers and body bytes (fetch would add or refuse some). */
export function rawRequest(port: number, { method, path, headers = {}, body }: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${method} ${path} within 10 s`)));
    req.on('error', reject);
    for (const chunk of typeof body === 'string' ? [body] : (body ?? [])) req.write(chunk);
    req.end();
  });
}
