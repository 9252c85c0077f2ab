import { Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_TRANSFER_PAGE, type TransferPage } from '../../src/transfers/transfer-queries.js';
import type { TransferView } from '../../src/transfers/transfer-view.js';
import { basicAuth, startTestApp } from '../support/http-app.js';
import { captureLogs } from '../support/log-capture.js';
import { runRound, startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { claim, deposit } from './support/transactions.js';
import { bridgeTransferChains, startTransfersApp } from './support/transfers-app.js';

/**
 * GET /transfers and GET /transfers/:index over a real port, reading a real devnet: admin auth,
 * parameter checks (400 naming the parameter), page bounds, 404 past entry_count, 409 without
 * chain configuration.
 */

const CREDENTIALS = { username: 'operator', password: 'transfers-password' };
const ADMIN = { authorization: basicAuth(CREDENTIALS.username, CREDENTIALS.password) };

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

async function startServer(b: DevnetBridge): Promise<string> {
  const app = await startTransfersApp(bridgeTransferChains(b), { logs: captureLogs('info'), auth: CREDENTIALS });
  b.onClose(() => app.close());
  return app.url;
}

async function get(url: string, headers: Record<string, string> = ADMIN): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: await response.json() };
}

describe('GET /transfers', () => {
  it('pages through the transfers of a devnet, with phases, voters and the SPEC §7 row', async () => {
    bridge = await startDevnetBridge();
    const cranks = await startBridgeCranks(bridge, [0, 1]);
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    for (const amount of [100n, 200n, 300n]) await deposit(bridge, { amount, sourceMint: mint, recipient: Keypair.generate().publicKey.toBase58() });
    await runRound(cranks);
    await claim(bridge, 0);
    const url = await startServer(bridge);

    expect((await get(`${url}/transfers`, {})).status).toBe(401);
    expect((await get(`${url}/transfers/0`, { authorization: basicAuth('operator', 'wrong') })).status).toBe(401);

    const all = await get(`${url}/transfers`);
    expect(all.status).toBe(200);
    const page = all.body as TransferPage;
    expect(page).toMatchObject({ from: 0, limit: 50, next: null, source: { entry_count: '3' }, destination: { entry_count: '3' } });
    expect(page.transfers.map((transfer) => transfer.phase)).toEqual(['ack_withdraw', 'withdraw', 'withdraw']);
    const authorities = bridge.authorities.map((key) => key.publicKey.toBase58());
    expect(page.transfers[0]!.destination?.voters).toEqual({ yes: [authorities[0], authorities[1]], no: [] });
    expect(page.transfers[0]).toMatchObject({ rule_3_1_holds: true, source: { amount: '100', status: 'Initialized' } });
    expect(page.transfers[1]!.recovery?.symptom).toBe('Withdraw entry exists but is not executable');

    const second = (await get(`${url}/transfers?from=1&limit=1`)).body as TransferPage;
    expect(second).toMatchObject({ from: 1, limit: 1, next: 2 });
    expect(second.transfers.map((transfer) => transfer.index)).toEqual([1]);
    const past = (await get(`${url}/transfers?from=10&limit=5`)).body as TransferPage;
    expect(past).toMatchObject({ next: null, transfers: [] });

    const one = await get(`${url}/transfers/2`);
    expect(one.status).toBe(200);
    expect(one.body as TransferView).toMatchObject({ index: 2, phase: 'withdraw', source: { amount: '300' } });
    expect(await get(`${url}/transfers/3`)).toEqual({
      status: 404,
      body: { error: 'transfer_not_found', message: 'transfer 3 does not exist: the source DepositTracker has 3 entries (indices 0..2)' },
    });
  });

  it('refuses bad parameters with 400 naming the parameter, before any chain read', async () => {
    const app = await startTestApp({ auth: CREDENTIALS });
    try {
      const cases: Array<[string, string]> = [
        ['/transfers?from=-1', 'from: expected a non-negative integer, got "-1"'],
        ['/transfers?from=1.5', 'from: expected a non-negative integer, got "1.5"'],
        ['/transfers?limit=abc', 'limit: expected a non-negative integer, got "abc"'],
        [`/transfers?limit=${MAX_TRANSFER_PAGE + 1}`, `limit: expected at most ${MAX_TRANSFER_PAGE}, got "${MAX_TRANSFER_PAGE + 1}"`],
        ['/transfers/x1', 'index: expected a non-negative integer, got "x1"'],
        ['/transfers/99999999999999999999', 'index: expected a non-negative integer, got "99999999999999999999"'],
      ];
      for (const [path, message] of cases) {
        expect(await get(`${app.url}${path}`), path).toEqual({ status: 400, body: { error: 'invalid_parameter', message } });
      }
      // Valid parameters reach the reads, which a server without chain configuration refuses.
      const disabled = await get(`${app.url}/transfers?from=0&limit=${MAX_TRANSFER_PAGE}`);
      expect(disabled.status).toBe(409);
      expect(disabled.body).toMatchObject({ error: 'crank_disabled' });
      expect((await get(`${app.url}/transfers/0`)).status).toBe(409);
    } finally {
      await app.close();
    }
  });
});
