import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { BridgeError } from '../../src/errors.js';
import { sanitizeInspected } from '../../src/machines/inspection.js';
import { startCrank, type CrankService } from '../../src/machines/crank-service.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { Logger } from '../../src/log/logger.js';
import { captureLogs } from '../support/log-capture.js';
import { bridgeView, deposits } from './support/bridge-view.js';
import { fails, ScriptedChains } from './support/scripted-chains.js';
import { startWebSocketSink, type WebSocketSink } from './support/websocket-sink.js';
import { TEST_CHAIN_BOUNDS, TEST_CRANK_SETTINGS } from './support/test-crank.js';

const SECRET = Uint8Array.from({ length: 64 }, (_, i) => 200 - i);
const SECRET_TEXT = [...SECRET].join(',');

/** An error dragging a keypair-shaped object along, as a careless layer might. */
function errorWithSecret(): BridgeError<'CHAIN__RPC_FAILED'> {
  const error = new BridgeError(
    'CHAIN__RPC_FAILED',
    { chain: 'target', method: 'sendTransaction', kind: 'timeout' },
    { what: 'sendTransaction', reason: 'timed out' },
  );
  Object.assign(error, { signer: { publicKey: 'Authority1111', secretKey: SECRET } });
  return error;
}

/** A crank with one attempt per action whose next poll is a minute away: its cycles are the test's. */
function startOnDemandCrank(chains: ScriptedChains, logger: Logger, inspectUrl?: string): CrankService {
  return startCrank({
    settings: { ...TEST_CRANK_SETTINGS, pollIntervalMs: 60_000, maxAttempts: 1, retryBackoffMs: 0, inspectUrl },
    chains,
    chainBounds: TEST_CHAIN_BOUNDS,
    logger,
    metrics: createMetrics(new Registry()),
  });
}

describe('sanitizeInspected', () => {
  it('keeps JSON data, turns errors into their messages and bigint into decimal strings', () => {
    expect(sanitizeInspected({ type: 'x', error: errorWithSecret(), amount: 5n, nested: [{ ok: true }], fn: () => 1 })).toEqual({
      type: 'x',
      error: { error: 'sendTransaction failed: timed out' },
      amount: '5',
      nested: [{ ok: true }],
    });
  });

  it('redacts keypair-shaped values', () => {
    const sanitized = JSON.stringify(sanitizeInspected({ context: { signer: { publicKey: 'P', secretKey: [...SECRET] } } }));
    expect(sanitized).not.toContain(SECRET_TEXT);
    expect(sanitized).toContain('[redacted keypair]');
  });

  it('never throws, even on a circular value', () => {
    const circular: Record<string, unknown> = { type: 'loop' };
    circular['self'] = circular;
    expect(sanitizeInspected(circular)).toEqual({ unserializable: expect.any(String) });
    expect(sanitizeInspected(undefined)).toBeUndefined();
  });
});

describe('crank inspection', () => {
  let crank: CrankService | undefined;
  let sink: WebSocketSink | undefined;
  afterEach(async () => {
    await crank?.stop(0);
    await sink?.close();
    crank = undefined;
    sink = undefined;
  });

  it('logs every crank transition at debug level, and nothing of it at info', async () => {
    for (const level of ['debug', 'info'] as const) {
      const logs = captureLogs(level);
      const chains = new ScriptedChains(bridgeView({ deposits: [], withdrawals: [] }));
      crank = startOnDemandCrank(chains, logs.logger);
      await crank.runOnce();
      await crank.stop(0);
      const transitions = logs.records().filter((record) => record['msg'] === 'crank transition');
      if (level === 'debug') {
        expect(transitions.map((record) => record['state'])).toContain('idle');
        expect(transitions.map((record) => record['event'])).toContain('CRANK_ONCE');
      } else {
        expect(transitions).toEqual([]);
      }
    }
  });

  it('sends sanitized inspection events to the BRIDGE_XSTATE_INSPECT WebSocket, and no secret', async () => {
    sink = await startWebSocketSink();
    const chains = new ScriptedChains(bridgeView({ deposits: deposits(2), withdrawals: [] }));
    chains.script('ackDeposits', fails(errorWithSecret()));
    const logs = captureLogs('info');
    crank = startOnDemandCrank(chains, logs.logger, sink.url);
    // The failed ack_deposit reaches the inspector as an error event carrying only its message.
    const failure = await sink.waitFor((message) => message.includes('xstate.error.actor.submit') && message.includes('@xstate.snapshot'));
    expect(failure).toContain('sendTransaction failed: timed out');
    await sink.waitFor((message) => message.includes('"@xstate.actor"') && message.includes('"crank"'));
    const all = sink.messages.join('\n');
    expect(all).not.toContain(SECRET_TEXT);
    expect(all).not.toContain('secretKey');
    expect(sink.messages.every((message) => typeof JSON.parse(message) === 'object')).toBe(true);
    expect(logs.records()).toContainEqual(
      expect.objectContaining({ msg: 'crank: sending inspection events to BRIDGE_XSTATE_INSPECT', inspector: new URL(sink.url).origin }),
    );
  });
});
