import { Keypair } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createChainRpc } from '../../../src/chain/rpc/chain-rpc.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { captureLogs } from '../../support/log-capture.js';
import { metricSample, metricValue } from '../../support/metric-value.js';
import { agaveBanks, type AgaveBanks } from './agave-banks.js';
import { startJsonRpcServer, type JsonRpcTestServer, type RpcCall } from './json-rpc-test-server.js';

/**
 * The pool against nodes that answer as Agave's banks do (./agave-banks.ts): processed the head,
 * confirmed 2 slots behind, finalized 32, minContextSlot judged per bank, statuses from the
 * processed bank (docs/chain-client.md, "One floor per bank"). The clock moves 400 ms a slot.
 */

const servers: JsonRpcTestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const address = Keypair.fromSeed(new Uint8Array(32).fill(3)).publicKey;
const signal = () => new AbortController().signal;

/** What a call carried as minContextSlot, and the slot of the bank it was answered from. */
function carried(call: RpcCall): number | undefined {
  return (call.params.at(-1) as { minContextSlot?: number } | undefined)?.minContextSlot;
}

async function cluster(nodes: AgaveBanks[]) {
  const refused: RpcCall[] = [];
  const started = await Promise.all(
    nodes.map((banks) =>
      startJsonRpcServer((call) => {
        const reply = banks.handler()(call);
        if ('error' in reply && reply.error.code === -32016) refused.push(call);
        return reply;
      }),
    ),
  );
  servers.push(...started);
  let now = 5_000_000;
  const metrics: Metrics = createMetrics(new Registry());
  const logs = captureLogs('info');
  const [primary, ...fallbacks] = started.map((server) => server.url);
  const rpc = createChainRpc({
    chain: 'source',
    url: primary!,
    fallbackUrls: fallbacks,
    timeoutMs: 2_000,
    maxSlotLag: 128,
    metrics,
    logger: logs.logger,
    now: () => now,
  });
  const slot = () => {
    now += 400;
    for (const banks of nodes) banks.head += 1;
  };
  return { rpc, metrics, logs, refused, servers: started, slot };
}

describe('reads against Agave-like banks', () => {
  it('finalized, confirmed and status reads interleaved over 40 slots on two endpoints: no -32016, no re-base, no outlier, both up', async () => {
    const nodes = [agaveBanks(10_000), agaveBanks(9_999)];
    const { rpc, metrics, logs, refused, servers: started, slot } = await cluster(nodes);
    const signature = 'LandedSignature1111111111111111111111111111111111111111111111111';
    for (const banks of nodes) banks.landed.set(signature, 10_010);
    for (let i = 0; i < 40; i++) {
      await rpc.getBalance(address, 'finalized', signal());
      await rpc.getBalance(address, 'confirmed', signal());
      await rpc.getSignatureStatus(signature, { searchTransactionHistory: false }, signal());
      await rpc.getChainHeight('confirmed', signal());
      slot();
    }
    expect(refused).toEqual([]);
    expect(await metricValue(metrics.rpcSlotFloorRebases)).toBe(0);
    expect(await metricValue(metrics.rpcSlotOutliers)).toBe(0);
    for (const server of started) expect(await metricSample(metrics.rpcEndpointUp, { endpoint: new URL(server.url).origin })).toBe(1);
    expect(logs.records().filter((record) => record.level === 'warn' || record.level === 'error')).toEqual([]);
    // The floors were carried: a finalized read asked for a finalized slot, never a confirmed one.
    const calls = started.flatMap((server) => server.calls);
    const finalizedFloors = calls
      .filter((call) => call.method === 'getBalance' && (call.params[1] as { commitment: string }).commitment === 'finalized')
      .map(carried);
    expect(finalizedFloors.filter((floor) => floor !== undefined).length).toBeGreaterThan(30);
    // Never ahead of the slower node's confirmed bank, and never left behind its finalized one.
    expect(rpc.slotFloor()).toBeLessThanOrEqual(nodes[1]!.bankSlot('confirmed'));
    expect(rpc.slotFloor()).toBeGreaterThan(nodes[1]!.bankSlot('finalized'));
    expect(Math.max(...finalizedFloors.map((floor) => floor ?? 0))).toBeLessThanOrEqual(nodes[0]!.bankSlot('finalized'));
  });

  it("a status poll's processed context slot is never a floor mark: the confirmed read after it is answered at once, on one endpoint too", async () => {
    const banks = agaveBanks(20_000);
    const { rpc, refused, slot } = await cluster([banks]);
    for (let i = 0; i < 10; i++) {
      await rpc.getSignatureStatus('NotLanded111111111111111111111111111111111111111111111111111111', { searchTransactionHistory: false }, signal());
      await rpc.getSignatureStatus('NotLanded111111111111111111111111111111111111111111111111111111', { searchTransactionHistory: false }, signal());
      await rpc.getBalance(address, 'confirmed', signal());
      slot();
    }
    expect(refused).toEqual([]);
    expect(rpc.slotFloor()).toBeLessThanOrEqual(banks.bankSlot('confirmed'));
  });

  it('the head for slots to land is read at processed and believed, but raises no floor', async () => {
    const nodes = [agaveBanks(30_000), agaveBanks(30_000)];
    const { rpc, slot } = await cluster(nodes);
    for (let i = 0; i < 5; i++) {
      await rpc.getBalance(address, 'confirmed', signal());
      slot();
    }
    for (let i = 0; i < 5; i++) expect(await rpc.getProcessedSlot(signal())).toBe(nodes[0]!.head);
    expect(rpc.slotFloor()).toBeLessThanOrEqual(nodes[0]!.bankSlot('confirmed'));
  });

  it('a landing seen confirmed raises the confirmed floor; a finalized read still asks only what finalized has reached', async () => {
    const nodes = [agaveBanks(40_000), agaveBanks(40_000)];
    const { rpc, refused, slot } = await cluster(nodes);
    const signature = 'LandedSignature2222222222222222222222222222222222222222222222222';
    for (let i = 0; i < 5; i++) {
      await rpc.getBalance(address, 'finalized', signal());
      await rpc.getBalance(address, 'confirmed', signal());
      slot();
    }
    for (const banks of nodes) banks.landed.set(signature, banks.head - 2);
    const { status } = await rpc.getSignatureStatus(signature, { searchTransactionHistory: false }, signal());
    expect(status?.confirmationStatus).toBe('confirmed');
    expect(rpc.slotFloor()).toBe(nodes[0]!.head - 2);
    await rpc.getBalance(address, 'finalized', signal());
    await rpc.getBalance(address, 'confirmed', signal());
    expect(refused).toEqual([]);
  });
});
