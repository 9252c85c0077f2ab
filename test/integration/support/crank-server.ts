import { startTestApp } from '../../support/http-app.js';
import type { AdminCredentials } from '../../../src/http/auth.js';
import type { BridgeCrank } from './cranks.js';
import type { DevnetBridge } from './devnet-bridge.js';

/** The real app for `crank` on a 127.0.0.1 port; closed with the bridge, before the crank stops (as the process shuts down). */
export async function startCrankServer(bridge: DevnetBridge, crank: BridgeCrank, auth?: AdminCredentials): Promise<string> {
  const app = await startTestApp({ crank: crank.service, metrics: crank.metrics, logs: crank.logs, auth });
  bridge.onClose(() => app.close());
  return app.url;
}
