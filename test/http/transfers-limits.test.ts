import { afterEach, describe, expect, it } from 'vitest';
import type { TransferRange } from '../../src/chain/client/read/read-transfers.js';
import { BridgeError } from '../../src/errors.js';
import { MAX_TRANSFER_READS_IN_FLIGHT } from '../../src/transfers/shared-reads.js';
import { createDisabledCrank } from '../../src/machines/disabled-crank.js';
import { createTransferQueries } from '../../src/transfers/transfer-queries.js';
import { trackerHeader } from '../machines/support/bridge-view.js';
import { rawRequest, startTestApp, type TestApp } from '../support/http-app.js';

/**
 * GET /transfers over a real port with a range reader the test holds: the cap on distinct reads
 * in flight answers 503 transfers_busy with Retry-After, like crank_busy; a failing RPC answers
 * 503 rpc_unavailable and is logged once per change (warn, then info when reads succeed again).
 */

const EMPTY: TransferRange = {
  sourceHeader: trackerHeader('DepositTracker', { entryCount: 0, ownNext: 0 }),
  targetHeader: trackerHeader('WithdrawTracker', { entryCount: 0, ownNext: 0 }),
  start: 0,
  deposits: [],
  withdrawals: [],
  slots: { source: 0, target: 0 },
};

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('GET /transfers limits', () => {
  it(`beyond ${MAX_TRANSFER_READS_IN_FLIGHT} distinct reads in flight: 503 transfers_busy with Retry-After`, async () => {
    const held: Array<(range: TransferRange) => void> = [];
    const read = (_from: number, _limit: number, _signal: AbortSignal) => new Promise<TransferRange>((resolve) => held.push(resolve));
    app = await startTestApp({ transfers: createTransferQueries(read) });
    const port = app.port;
    const running = Array.from({ length: MAX_TRANSFER_READS_IN_FLIGHT }, (_, from) =>
      rawRequest(port, { method: 'GET', path: `/transfers?from=${from}` }),
    );
    await expect.poll(() => held.length, { timeout: 5_000 }).toBe(MAX_TRANSFER_READS_IN_FLIGHT);
    const refused = await rawRequest(port, { method: 'GET', path: '/transfers?from=99' });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body)).toEqual({
      error: 'transfers_busy',
      message: `${MAX_TRANSFER_READS_IN_FLIGHT} different transfer reads are already running (at most ${MAX_TRANSFER_READS_IN_FLIGHT}); retry shortly, or ask for a range already being read`,
    });
    for (const resolve of held) resolve(EMPTY);
    expect((await Promise.all(running)).map((answer) => answer.status)).toEqual(Array.from({ length: MAX_TRANSFER_READS_IN_FLIGHT }, () => 200));
  });

  it('a failing RPC: 503 rpc_unavailable, one warning, no error line; one info line once a read succeeds', async () => {
    let failing = true;
    const read = async () => {
      if (!failing) return EMPTY;
      throw new BridgeError(
        'CHAIN__RPC_FAILED',
        { chain: 'source', method: 'getAccountInfo', kind: 'timeout' },
        { what: 'getAccountInfo on the source chain RPC (BRIDGE_SOURCE_RPC_URL)', reason: 'no response within 10000 ms' },
      );
    };
    app = await startTestApp({ transfers: createTransferQueries(read) });
    for (const path of ['/transfers', '/transfers?from=1', '/transfers/3']) {
      const answer = await rawRequest(app.port, { method: 'GET', path });
      expect(answer.status, path).toBe(503);
      expect(answer.headers['retry-after']).toBe('5');
      expect(JSON.parse(answer.body)).toEqual({
        error: 'rpc_unavailable',
        message: 'the chain could not be read: getAccountInfo on the source chain RPC (BRIDGE_SOURCE_RPC_URL) failed: no response within 10000 ms',
      });
    }
    failing = false;
    expect((await rawRequest(app.port, { method: 'GET', path: '/transfers?from=2' })).status).toBe(200);
    const records = app.logs.records();
    expect(records.filter((record) => record['level'] === 'error')).toEqual([]);
    expect(
      records.filter((record) => String(record['msg']).startsWith('GET /transfers: chain RPC')).map((record) => [record['level'], record['msg']]),
    ).toEqual([
      ['warn', 'GET /transfers: chain RPC unavailable; answering 503 rpc_unavailable until a read succeeds'],
      ['info', 'GET /transfers: chain RPC answers again'],
    ]);
  });
});

describe('GET /transfers and the flow breaker', () => {
  it('names the transfer the flow breaker holds, as /health does, and null once nothing is held', async () => {
    const disabled = createDisabledCrank();
    const held = { id: 'flow:1:mint:50', index: 1, mint: 'mint', amount: '50', carried: '60', limit: '100', window_hours: 24 };
    let flowHeld: typeof held | null = held;
    const crank = { ...disabled, health: () => ({ ...disabled.health(), watchdog: { held: { source: null, target: null }, flow_held: flowHeld } }) };
    // A new read each request (a read shares its answer for a second): each page says what is held now.
    app = await startTestApp({ crank, transfers: createTransferQueries(async () => EMPTY), transferReadsPerSecond: 1_000 });
    const page = async () => JSON.parse((await rawRequest(app!.port, { method: 'GET', path: '/transfers' })).body) as { flow_held: unknown };
    expect((await page()).flow_held).toEqual(held);
    flowHeld = null;
    await expect.poll(async () => (await page()).flow_held, { timeout: 5_000 }).toBeNull();
  });
});
