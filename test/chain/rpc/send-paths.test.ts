import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { FeeEstimates } from '../../../src/chain/rpc/fee-estimate.js';
import { PathAcceptances, SendPaths } from '../../../src/chain/rpc/send-paths.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { captureLogs } from '../../support/log-capture.js';
import { metricValue } from '../../support/metric-value.js';
import { startJsonRpcServer, type JsonRpcTestServer, type Reply } from './json-rpc-test-server.js';

/**
 * Send-only paths (docs/chain-client.md, "Send-only paths"): one sendTransaction per path with
 * skipPreflight and maxRetries 0, nothing else ever asked of it, each send bounded by the RPC
 * timeout, at most 4 open per path, counted per path. And a provider's fee estimate: one bounded
 * request, a bad answer is none.
 */

const servers: JsonRpcTestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Wire bytes as a signed transaction starts: a count of 1, then a 64-byte signature, then the message. */
const SIGNATURE_BYTES = Uint8Array.from({ length: 64 }, (_, i) => i + 1);
const WIRE = new Uint8Array([1, ...SIGNATURE_BYTES, 9, 9, 9]);
const SIGNATURE = bs58.encode(SIGNATURE_BYTES);

async function until(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('SendPaths', () => {
  it('sends the same bytes to every path, only sendTransaction, and counts what each accepted', async () => {
    const good = await startJsonRpcServer(() => ({ result: SIGNATURE }));
    const refusing = await startJsonRpcServer(() => ({ error: { code: -32602, message: 'tip missing' } }));
    servers.push(good, refusing);
    const metrics = createMetrics(new Registry());
    const paths = new SendPaths({ chain: 'target', urls: [good.url, refusing.url], timeoutMs: 1_000, metrics, logger: captureLogs().logger });
    const accepted: string[] = [];
    paths.send(WIRE, AbortSignal.timeout(5_000), (label) => accepted.push(label));
    const count = (path: string, outcome: string) => metricValue(metrics.sendPathSends, { chain: 'target', path, outcome });
    const [goodLabel, refusingLabel] = paths.labels;
    await until(async () => (await count(goodLabel!, 'accepted')) + (await count(refusingLabel!, 'failed')) === 2);
    expect(accepted).toEqual([goodLabel]);
    for (const server of [good, refusing]) {
      expect(server.calls).toEqual([
        { method: 'sendTransaction', params: [Buffer.from(WIRE).toString('base64'), { encoding: 'base64', skipPreflight: true, maxRetries: 0 }] },
      ]);
    }
  });

  it('a path that never answers: each send ends at the timeout, and at most 4 are open at once', async () => {
    const silent = await startJsonRpcServer(() => ({ hang: true }));
    servers.push(silent);
    const metrics = createMetrics(new Registry());
    const paths = new SendPaths({ chain: 'source', urls: [silent.url], timeoutMs: 300, metrics, logger: captureLogs().logger });
    const signal = AbortSignal.timeout(5_000);
    for (let i = 0; i < 6; i++) paths.send(WIRE, signal, () => undefined);
    const [label] = paths.labels;
    const failed = () => metricValue(metrics.sendPathSends, { chain: 'source', path: label!, outcome: 'failed' });
    // Two sends beyond the four open ones are skipped at once; the four end at the timeout.
    expect(await failed()).toBe(2);
    await until(() => silent.calls.length === 4);
    await until(async () => (await failed()) === 6, 2_000);
    expect(silent.calls).toHaveLength(4);
  });
});

describe('SendPaths: what a path says is checked', () => {
  it("an answer that is not the transaction's own signature is a failed send and a warn line, never an acceptance", async () => {
    const wrong = await startJsonRpcServer(() => ({ result: bs58.encode(new Uint8Array(64).fill(7)) }));
    servers.push(wrong);
    const metrics = createMetrics(new Registry());
    const logs = captureLogs('warn');
    const paths = new SendPaths({ chain: 'target', urls: [wrong.url], timeoutMs: 1_000, metrics, logger: logs.logger });
    const accepted: string[] = [];
    paths.send(WIRE, AbortSignal.timeout(5_000), (label) => accepted.push(label));
    const [label] = paths.labels;
    await until(async () => (await metricValue(metrics.sendPathSends, { chain: 'target', path: label!, outcome: 'failed' })) === 1);
    expect(accepted).toEqual([]);
    expect(await metricValue(metrics.sendPathSends, { chain: 'target', path: label!, outcome: 'accepted' })).toBe(0);
    expect(logs.records().map((line) => line.msg)).toEqual([expect.stringContaining('answered another signature')]);
    expect(logs.records()[0]!['signature']).toBe(SIGNATURE);
  });

  it('a 307 to another origin is not followed: the signed bytes never reach it, and the send failed with a warn line', async () => {
    const elsewhere = await startJsonRpcServer(() => ({ result: SIGNATURE }));
    const redirecting = await startJsonRpcServer(() => ({ http: 307, headers: { location: elsewhere.url } }));
    servers.push(elsewhere, redirecting);
    const metrics = createMetrics(new Registry());
    const logs = captureLogs('warn');
    const paths = new SendPaths({ chain: 'source', urls: [redirecting.url], timeoutMs: 1_000, metrics, logger: logs.logger });
    const accepted: string[] = [];
    paths.send(WIRE, AbortSignal.timeout(5_000), (label) => accepted.push(label));
    const [label] = paths.labels;
    await until(async () => (await metricValue(metrics.sendPathSends, { chain: 'source', path: label!, outcome: 'failed' })) === 1);
    expect(redirecting.calls).toHaveLength(1);
    expect(elsewhere.calls).toEqual([]);
    expect(accepted).toEqual([]);
    expect(logs.records().map((line) => line.msg)).toEqual([expect.stringContaining('redirect, which is never followed')]);
  });
});

describe('PathAcceptances: a landing is credited only to a path that alone could have caused it', () => {
  it('one acceptor is credited; several acceptors of the landed version (a path that drops what it accepts among them) are not', () => {
    const acceptances = new PathAcceptances();
    acceptances.accepted('only-staked', 'https://staked.example');
    acceptances.accepted('both', 'rpc');
    acceptances.accepted('both', 'https://drops-everything.example');
    expect(acceptances.pathsOf('only-staked')).toEqual(['https://staked.example']);
    expect(acceptances.pathsOf('both')).toEqual([]);
    expect(acceptances.pathsOf('never-accepted')).toEqual([]);
  });
});

describe('FeeEstimates (getPriorityFeeEstimate)', () => {
  it('asks the High level over the accounts, and takes a malformed or failed answer as no estimate', async () => {
    const answers: Reply[] = [{ result: { priorityFeeEstimate: 1234.5 } }, { result: { priorityFeeEstimate: 'lots' } }, { http: 500 }];
    const provider = await startJsonRpcServer(() => answers.shift()!);
    servers.push(provider);
    const estimates = new FeeEstimates({
      chain: 'target',
      url: provider.url,
      timeoutMs: 1_000,
      metrics: createMetrics(new Registry()),
      logger: captureLogs().logger,
    });
    const account = Keypair.generate().publicKey;
    expect(await estimates.estimate([account], AbortSignal.timeout(5_000))).toBe(1235);
    expect(await estimates.estimate([account], AbortSignal.timeout(5_000))).toBeUndefined();
    expect(await estimates.estimate([account], AbortSignal.timeout(5_000))).toBeUndefined();
    expect(provider.calls[0]).toEqual({
      method: 'getPriorityFeeEstimate',
      params: [{ accountKeys: [account.toBase58()], options: { priorityLevel: 'High' } }],
    });
  });
});
