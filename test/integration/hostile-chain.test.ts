import { afterEach, describe, expect, it } from 'vitest';
import { NOTHING_ATTEMPTED, startBridgeCranks } from './support/cranks.js';
import { startCrankServer } from './support/crank-server.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit } from './support/transactions.js';

/**
 * A node that serves a forged DepositTracker header (entry_count = capacity = 2^52 in an
 * ordinary 256-entry account) must not take the authority down: the cycle plans nothing from it
 * and says why, /health keeps answering fast, memory stays flat, and the next cycle over an
 * honest header works. Before the bound this read allocated one range per 409 entries up to
 * 2^52 and the process died of heap exhaustion, at every restart.
 */

const MIB = 1024 * 1024;
let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/** Writes a u64 into the live account data of the devnet (the forging node's view). */
function writeU64(data: Uint8Array, offset: number, value: bigint): void {
  new DataView(data.buffer, data.byteOffset, data.byteLength).setBigUint64(offset, value, true);
}

// Header layout (PROTOCOL.md): discriminator 8, chain ids 2 + 2, threshold 1, count 1, padding 2.
const ENTRY_COUNT_OFFSET = 16;
const CAPACITY_OFFSET = 24;

describe('a forged tracker header', () => {
  it('is refused by name; /health answers within 100 ms during the bad cycle; RSS stays flat; the next honest cycle works', async () => {
    bridge = await startDevnetBridge();
    const [crank] = await startBridgeCranks(bridge, [0]);
    const url = await startCrankServer(bridge, crank!);
    await deposit(bridge, { amount: 100n, sourceMint: bridge.world.tokenPairs.normal.sourceMint });

    const account = bridge.pair.source.bank.account(bridge.depositTracker.toBase58())!;
    const honest = account.data.slice(0, 40);
    writeU64(account.data, ENTRY_COUNT_OFFSET, 2n ** 52n);
    writeU64(account.data, CAPACITY_OFFSET, 2n ** 52n);

    const rssBefore = process.memoryUsage().rss;
    let cycleDone = false;
    const cycle = fetch(`${url}/crank/once`, { method: 'POST' }).finally(() => {
      cycleDone = true;
    });
    const healthMs: number[] = [];
    do {
      const started = performance.now();
      const health = await fetch(`${url}/health`);
      healthMs.push(performance.now() - started);
      expect(health.status).toBe(200);
    } while (!cycleDone && healthMs.length < 200);
    const answer = await cycle;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ ...NOTHING_ATTEMPTED, role: 'active' });
    expect(Math.max(...healthMs)).toBeLessThan(100);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * MIB);

    const bad = (await (await fetch(`${url}/health`)).json()) as { status: string; crank: { last_error: string } };
    expect(bad.status).toBe('degraded');
    expect(bad.crank.last_error).toMatch(
      /^reading the trackers failed: .*capacity.*is 4503599627370496, above the \d+ entries a 10 MiB DepositTracker can hold/,
    );
    expect(bad.crank.last_error).toContain(bridge.depositTracker.toBase58());

    account.data.set(honest, 0);
    const good = await fetch(`${url}/crank/once`, { method: 'POST' });
    expect(await good.json()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true, role: 'active' });
    const healthy = (await (await fetch(`${url}/health`)).json()) as { status: string; crank: { last_error: string | null } };
    expect(healthy).toMatchObject({ status: 'ok', crank: { last_error: null } });
  });
});
