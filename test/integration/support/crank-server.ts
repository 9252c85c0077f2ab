import type { AddressInfo } from 'node:net';
import { buildApp } from '../../../src/http/app.js';
import type { AdminCredentials } from '../../../src/http/auth.js';
import { createDisabledTransferQueries } from '../../../src/machines/transfers/transfer-queries.js';
import type { BridgeCrank } from './cranks.js';
import type { DevnetBridge } from './devnet-bridge.js';

/** The real app for `crank` on a 127.0.0.1 port; closed with the bridge, before the crank stops (as the process shuts down). */
export async function startCrankServer(bridge: DevnetBridge, crank: BridgeCrank, auth?: AdminCredentials): Promise<string> {
  const app = buildApp({
    crank: crank.service,
    transfers: createDisabledTransferQueries(),
    metrics: crank.metrics,
    logger: crank.logs.logger,
    auth,
    hosts: { bindHost: '127.0.0.1', allowedHosts: [] },
    maxConnectionsPerAddress: 32,
    onKill: () => undefined,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  bridge.onClose(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}
