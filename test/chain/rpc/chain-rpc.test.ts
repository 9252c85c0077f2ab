import { Keypair } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isBridgeError } from '../../../src/errors.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { createChainRpc } from '../../../src/chain/rpc/chain-rpc.js';
import { preflightFailure } from '../../../src/chain/rpc/rpc-failure.js';
import { serializeError } from '../../../src/log/logger.js';
import { startJsonRpcServer, type Handler, type JsonRpcTestServer } from './json-rpc-test-server.js';
import { metricValue } from '../../support/metric-value.js';
import { isDefiniteSendRefusal, retriesAction } from '../../../src/failure-policy.js';
import { rejection } from '../../support/rejection.js';

let server: JsonRpcTestServer | undefined;

afterEach(async () => {
  vi.restoreAllMocks();
  await server?.close();
  server = undefined;
});

const owner = Keypair.fromSeed(new Uint8Array(32).fill(1)).publicKey;
const address = Keypair.fromSeed(new Uint8Array(32).fill(2)).publicKey;

async function setup(handler: Handler, timeoutMs = 2_000) {
  server = await startJsonRpcServer(handler);
  return createChainRpc({ chain: 'target', url: server.url, timeoutMs, metrics: createMetrics(new Registry()) });
}

const signal = () => new AbortController().signal;

describe('createChainRpc reads through web3.js', () => {
  it('getAccountInfo sends commitment, dataSlice and minContextSlot, and returns bytes, owner and slot', async () => {
    const data = Buffer.from([1, 2, 3, 4]);
    const rpc = await setup(() => ({
      result: {
        context: { slot: 77 },
        value: { data: [data.toString('base64'), 'base64'], executable: false, lamports: 5, owner: owner.toBase58(), rentEpoch: 0, space: 4 },
      },
    }));
    const snapshot = await rpc.getAccountInfo(
      address,
      { commitment: 'finalized', dataSlice: { offset: 848, length: 4 }, minContextSlot: 70 },
      signal(),
    );
    expect(snapshot.slot).toBe(77);
    expect(snapshot.account?.owner.equals(owner)).toBe(true);
    expect([...(snapshot.account?.data ?? [])]).toEqual([1, 2, 3, 4]);
    expect(snapshot.account?.space).toBe(4);
    expect(server?.calls[0]).toEqual({
      method: 'getAccountInfo',
      params: [address.toBase58(), { commitment: 'finalized', encoding: 'base64', dataSlice: { offset: 848, length: 4 }, minContextSlot: 70 }],
    });
  });

  describe('getMultipleAccounts', () => {
    const other = Keypair.fromSeed(new Uint8Array(32).fill(3)).publicKey;
    const encoded = (bytes: number[], space: number) => ({
      data: [Buffer.from(bytes).toString('base64'), 'base64'],
      executable: false,
      lamports: 5,
      owner: owner.toBase58(),
      rentEpoch: 0,
      space,
    });

    it("sends every address with one dataSlice and minContextSlot; returns each account (or null) in order, at the answer's slot", async () => {
      const rpc = await setup(() => ({ result: { context: { slot: 90 }, value: [encoded([1, 2], 2), null] } }));
      const snapshot = await rpc.getMultipleAccounts(
        [address, other],
        { commitment: 'confirmed', dataSlice: { offset: 0, length: 848 }, minContextSlot: 80 },
        signal(),
      );
      expect(snapshot.slot).toBe(90);
      expect(
        snapshot.accounts.map((account) => account && { owner: account.owner.toBase58(), data: [...account.data], space: account.space }),
      ).toEqual([{ owner: owner.toBase58(), data: [1, 2], space: 2 }, null]);
      expect(server?.calls[0]).toEqual({
        method: 'getMultipleAccounts',
        params: [
          [address.toBase58(), other.toBase58()],
          { commitment: 'confirmed', encoding: 'base64', dataSlice: { offset: 0, length: 848 }, minContextSlot: 80 },
        ],
      });
    });

    it.each([
      ['fewer accounts than addresses', [encoded([1], 1)], /1 accounts for 2 addresses/],
      ['more data than the slice asked', [encoded([1, 2, 3, 4, 5], 5), null], /an account of 5 bytes for a slice of 4/],
      ['an owner that is not an address', [{ ...encoded([1], 1), owner: 'not-a-key' }, null], /not a base58 address/],
      ['data that is not base64', [{ ...encoded([1], 1), data: ['%%%', 'base64'] }, null], /data/],
      ['a negative lamports count', [{ ...encoded([1], 1), lamports: -1 }, null], /lamports/],
    ])('%s: a malformed answer, retried on every try and then a retryable CHAIN__RPC_FAILED', async (_what, value, reason) => {
      const rpc = await setup(() => ({ result: { context: { slot: 1 }, value } }));
      const err = await rejection(
        rpc.getMultipleAccounts([address, other], { commitment: 'confirmed', dataSlice: { offset: 0, length: 4 } }, signal()),
      );
      expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && err.context).toMatchObject({ method: 'getMultipleAccounts', kind: 'malformed' });
      expect((err as Error).message).toMatch(reason);
      expect(retriesAction(err)).toBe(true);
      expect(server?.calls).toHaveLength(3);
    });

    it('asks no node for more than 100 addresses or 64 KiB of data in all: a RangeError before any request', async () => {
      const rpc = await setup(() => ({ result: { context: { slot: 1 }, value: [] } }));
      const many = Array.from({ length: 101 }, () => address);
      expect(() => rpc.getMultipleAccounts(many, { commitment: 'confirmed', dataSlice: { offset: 0, length: 1 } }, signal())).toThrow(
        /at most 100 addresses, not 101/,
      );
      const wide = Array.from({ length: 78 }, () => address);
      expect(() => rpc.getMultipleAccounts(wide, { commitment: 'confirmed', dataSlice: { offset: 0, length: 848 } }, signal())).toThrow(
        /at most 65536 bytes in all, not 78 x 848/,
      );
      expect(server?.calls).toEqual([]);
    });
  });

  it('getSignaturesForAddress sends the limit at confirmed and returns the newest first', async () => {
    const rpc = await setup(() => ({
      result: [
        { signature: '5'.repeat(88), slot: 12, err: null, memo: null, blockTime: 1795504690, confirmationStatus: 'confirmed' },
        { signature: '4'.repeat(88), slot: 9, err: { InstructionError: [0, { Custom: 6001 }] }, memo: null, blockTime: null },
      ],
    }));
    const infos = await rpc.getSignaturesForAddress(address, { limit: 20 }, signal());
    expect(infos).toEqual([
      { signature: '5'.repeat(88), slot: 12, err: null, blockTime: 1795504690 },
      { signature: '4'.repeat(88), slot: 9, err: { InstructionError: [0, { Custom: 6001 }] }, blockTime: null },
    ]);
    expect(server?.calls[0]).toEqual({ method: 'getSignaturesForAddress', params: [address.toBase58(), { commitment: 'confirmed', limit: 20 }] });
  });

  it('getAccountInfo of a missing account is null', async () => {
    const rpc = await setup(() => ({ result: { context: { slot: 3 }, value: null } }));
    expect(await rpc.getAccountInfo(address, { commitment: 'confirmed' }, signal())).toEqual({ slot: 3, account: null });
  });

  it('getSignatureStatus asks for one signature with searchTransactionHistory and returns the context slot with it', async () => {
    const rpc = await setup(() => ({
      result: { context: { slot: 9 }, value: [{ slot: 8, confirmations: 1, err: null, confirmationStatus: 'confirmed' }] },
    }));
    const { slot, status } = await rpc.getSignatureStatus('sig', { searchTransactionHistory: true }, signal());
    expect(slot).toBe(9);
    expect(status).toMatchObject({ confirmationStatus: 'confirmed', err: null });
    expect(server?.calls[0]).toEqual({ method: 'getSignatureStatuses', params: [['sig'], { searchTransactionHistory: true }] });
  });

  it.each([
    { code: -32005, transient: true, why: 'node unhealthy or behind' },
    { code: -32004, transient: true, why: 'block not available' },
    { code: -32016, transient: true, why: 'minContextSlot not reached' },
    { code: -32603, transient: true, why: 'internal error' },
    { code: -32602, transient: false, why: 'invalid params' },
    { code: -32601, transient: false, why: 'method not found' },
  ])('JSON-RPC error $code ($why) -> transient $transient', async ({ code, transient }) => {
    const rpc = await setup(() => ({ error: { code, message: 'from the node' } }));
    const err = await rejection(rpc.getBalance(address, 'confirmed', signal()));
    expect(isBridgeError(err, 'CHAIN__RPC_FAILED')).toBe(true);
    expect((err as { context: unknown }).context).toEqual({
      chain: 'target',
      method: 'getBalance',
      kind: 'rpc',
      rpcCode: code,
      endpoint: new URL(server!.url).origin,
    });
    expect(retriesAction(err)).toBe(transient);
    expect((err as Error).message).toContain(`JSON-RPC error ${code}`);
  });

  it('a result of the wrong shape -> retryable CHAIN__RPC_FAILED', async () => {
    const rpc = await setup(() => ({ result: { context: { slot: 1 }, value: 'lots' } }));
    const err = await rejection(rpc.getBalance(address, 'confirmed', signal()));
    expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && retriesAction(err)).toBe(true);
    expect((err as Error).message).toMatch(/response of an unexpected shape/);
  });

  it('aborting a Connection call cancels its HTTP request promptly', async () => {
    const rpc = await setup(() => ({ hang: true }), 30_000);
    const controller = new AbortController();
    const pending = rpc.getLatestBlockhash('confirmed', controller.signal);
    await vi.waitFor(() => expect(server?.hanging).toBe(1));
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await vi.waitFor(() => expect(server?.hanging).toBe(0));
  });

  it('web3.js writes nothing to the console on 429, timeouts or bad bodies', async () => {
    const spies = (['log', 'warn', 'error', 'info', 'debug'] as const).map((name) => vi.spyOn(console, name));
    const replies = [{ http: 429 }, { raw: 'garbage' }, { hang: true as const }, { error: { code: -32002, message: 'x', data: { logs: ['a'] } } }];
    let next = 0;
    const rpc = await setup(() => replies[next++ % replies.length]!, 200);
    for (let i = 0; i < replies.length; i++) await rejection(rpc.getChainHeight('confirmed', signal()));
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    // Every scripted reply was served (reads are retried, so some more than once).
    expect(server?.calls.length).toBeGreaterThanOrEqual(replies.length);
  });
});

describe('createChainRpc sendTransaction (plain JSON-RPC)', () => {
  const wire = new Uint8Array([9, 8, 7]);

  it('sends base64 with preflight settings and maxRetries 0', async () => {
    const rpc = await setup(() => ({ result: 'SiGnAtUrE' }));
    expect(await rpc.sendTransaction(wire, { skipPreflight: false, preflightCommitment: 'confirmed' }, signal())).toBe('SiGnAtUrE');
    expect(server?.calls[0]).toEqual({
      method: 'sendTransaction',
      params: ['CQgH', { encoding: 'base64', skipPreflight: false, preflightCommitment: 'confirmed', maxRetries: 0 }],
    });
  });

  it('keeps the InstructionError and logs of a preflight refusal (-32002)', async () => {
    const transactionError = { InstructionError: [2, { Custom: 6001 }] };
    const rpc = await setup(() => ({
      error: {
        code: -32002,
        message: 'Transaction simulation failed: Error processing Instruction 2',
        data: { err: transactionError, logs: ['Program log: VoteOutOfOrder'] },
      },
    }));
    const err = await rejection(rpc.sendTransaction(wire, { skipPreflight: false, preflightCommitment: 'confirmed' }, signal()));
    expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && err.context).toMatchObject({ method: 'sendTransaction', rpcCode: -32002, kind: 'rpc' });
    expect(preflightFailure(err)).toEqual({ transactionError, logs: ['Program log: VoteOutOfOrder'] });
    expect(isDefiniteSendRefusal(err)).toBe(true);
  });

  it.each([
    { reply: { error: { code: -32005, message: 'unhealthy' } }, refusal: true },
    { reply: { error: { code: -32603, message: 'internal' } }, refusal: false },
    { reply: { http: 502 }, refusal: false },
    { reply: { drop: true as const }, refusal: false },
  ])('a failed send is a definite refusal only when the node said so: %j', async ({ reply, refusal }) => {
    const rpc = await setup(() => reply);
    const err = await rejection(rpc.sendTransaction(wire, { skipPreflight: true, preflightCommitment: 'confirmed' }, signal()));
    expect(isDefiniteSendRefusal(err)).toBe(refusal);
    expect(preflightFailure(err)).toBeUndefined();
  });

  it('a result that is not a signature string -> retryable failure', async () => {
    const rpc = await setup(() => ({ result: 12 }));
    const err = await rejection(rpc.sendTransaction(wire, { skipPreflight: false, preflightCommitment: 'confirmed' }, signal()));
    expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && retriesAction(err)).toBe(true);
    expect(isDefiniteSendRefusal(err)).toBe(false);
  });
});

describe('createChainRpc bounds what the node writes', () => {
  // Large, yet under the response limit (bounded-body.ts): what the node's text can cost once read.
  const MB = 90 * 1024;

  it('a -32005 with a 90 KiB message and data: the error, its cause and its log form stay small', async () => {
    const rpc = await setup(() => ({ error: { code: -32005, message: `Node is behind ${'z'.repeat(MB)}`, data: { blob: 'd'.repeat(MB) } } }));
    const err = await rejection(rpc.getBalance(address, 'confirmed', signal()));
    expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && err.context).toEqual({
      chain: 'target',
      method: 'getBalance',
      kind: 'rpc',
      rpcCode: -32005,
      endpoint: new URL(server!.url).origin,
    });
    const { message, cause } = err as Error;
    expect(message).toMatch(
      /^getBalance on the destination chain RPC \(BRIDGE_TARGET_RPC_URL\) failed: JSON-RPC error -32005: .*Node is behind z+… \(\d+ more\) \(transient; it is retried\)$/,
    );
    expect(message.length).toBeLessThan(500);
    expect((cause as Error).message.length).toBeLessThan(300);
    expect(JSON.stringify(serializeError(err)).length).toBeLessThan(4_000);
  });

  it('a provider echoing the request URL with its API key: only the origin is kept', async () => {
    const rpc = await setup(() => ({
      error: { code: -32603, message: 'upstream failed for https://rpc.provider.example/v1/API-KEY-123?token=T0K3N' },
    }));
    const err = await rejection(rpc.getChainHeight('confirmed', signal()));
    expect((err as Error).message).toContain('https://rpc.provider.example');
    expect(JSON.stringify(serializeError(err))).not.toMatch(/API-KEY-123|T0K3N/);
  });

  it('control characters in a node message cannot forge a log line', async () => {
    const rpc = await setup(() => ({ error: { code: -32005, message: 'behind\n{"level":"fatal","msg":"forged"}\u001b[2J' } }));
    const err = await rejection(rpc.getChainHeight('confirmed', signal()));
    expect((err as Error).message).not.toMatch(/[\u0000-\u001f]/);
    expect((err as Error).message).toContain('behind {"level":"fatal","msg":"forged"} [2J');
  });

  it('a preflight refusal keeps its data for the transaction error; an oversized data is dropped', async () => {
    const transactionError = { InstructionError: [0, { Custom: 6001 }] };
    const replies = [
      { error: { code: -32002, message: 'x'.repeat(MB), data: { err: transactionError, logs: ['Program log: ok'] } } },
      { error: { code: -32002, message: 'simulation failed', data: { err: transactionError, logs: ['l'.repeat(MB)] } } },
    ];
    let next = 0;
    const rpc = await setup(() => replies[next++]!);
    const send = () => rpc.sendTransaction(new Uint8Array([1]), { skipPreflight: false, preflightCommitment: 'confirmed' }, signal());
    expect(preflightFailure(await rejection(send()))).toEqual({ transactionError, logs: ['Program log: ok'] });
    const oversized = await rejection(send());
    expect(preflightFailure(oversized)).toBeUndefined();
    expect(JSON.stringify(serializeError(oversized)).length).toBeLessThan(4_000);
  });
});

describe('createChainRpc compute and fee reads (plain JSON-RPC)', () => {
  it('simulateTransactionElsewhere asks the other endpoint, and says which one answered', async () => {
    const simulated = (unitsConsumed: number) => () => ({ result: { context: { slot: 9 }, value: { err: null, logs: [], unitsConsumed } } });
    server = await startJsonRpcServer(simulated(1_400_000));
    const other = await startJsonRpcServer(simulated(72_450));
    try {
      const rpc = createChainRpc({
        chain: 'target',
        url: server.url,
        fallbackUrls: [other.url],
        timeoutMs: 2_000,
        metrics: createMetrics(new Registry()),
      });
      const first = await rpc.simulateTransaction(new Uint8Array([1]), signal());
      expect(first).toEqual({ err: null, unitsConsumed: 1_400_000, endpoint: rpc.endpoints[0] });
      expect(await rpc.simulateTransactionElsewhere(new Uint8Array([1]), first.endpoint, signal())).toEqual({
        err: null,
        unitsConsumed: 72_450,
        endpoint: rpc.endpoints[1],
      });
      // Beside the pool's slot probes.
      expect(other.calls.filter((call) => call.method === 'simulateTransaction')).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('simulateTransaction sends base64 without signature checks, on the node blockhash, at confirmed; returns err, unitsConsumed and who answered', async () => {
    const rpc = await setup(() => ({
      result: { context: { slot: 9 }, value: { err: null, logs: [], accounts: null, unitsConsumed: 24_450, returnData: null } },
    }));
    const simulation = await rpc.simulateTransaction(new Uint8Array([1, 2, 3]), signal());
    expect(simulation).toEqual({ err: null, unitsConsumed: 24_450, endpoint: rpc.endpoints[0] });
    // One endpoint: no second opinion to ask.
    expect(await rpc.simulateTransactionElsewhere(new Uint8Array([1, 2, 3]), simulation.endpoint, signal())).toBeUndefined();
    expect(server?.calls[0]).toEqual({
      method: 'simulateTransaction',
      params: ['AQID', { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: true, commitment: 'confirmed' }],
    });
  });

  describe('a simulation carries the slot floor (docs/chain-client.md, "What a node can claim")', () => {
    /** A node at slot 100 whose simulations answer at `simulatedAt`. */
    const nodeAt =
      (simulatedAt: number, unitsConsumed: number): Handler =>
      (call) => {
        if (call.method === 'getSlot') return { result: 100 };
        if (call.method === 'getGenesisHash') return { result: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG' };
        if (call.method === 'simulateTransaction')
          return { result: { context: { slot: simulatedAt }, value: { err: null, logs: [], unitsConsumed } } };
        return { result: { context: { slot: 100 }, value: 1 } };
      };
    const simulations = (node: JsonRpcTestServer) => node.calls.filter((call) => call.method === 'simulateTransaction');

    it('sends the floor as minContextSlot; an answer older than it is refused and the read moves on to the next endpoint', async () => {
      server = await startJsonRpcServer(nodeAt(90, 1_400_000));
      const other = await startJsonRpcServer(nodeAt(100, 72_450));
      try {
        const metrics = createMetrics(new Registry());
        const rpc = createChainRpc({ chain: 'target', url: server.url, fallbackUrls: [other.url], timeoutMs: 2_000, metrics });
        await rpc.getBalance(address, 'confirmed', signal());
        await rpc.getBalance(address, 'confirmed', signal());
        expect(rpc.slotFloor()).toBe(100);

        expect(await rpc.simulateTransaction(new Uint8Array([1]), signal())).toEqual({
          err: null,
          unitsConsumed: 72_450,
          endpoint: rpc.endpoints[1],
        });
        expect(simulations(server)).toHaveLength(1);
        expect(simulations(server)[0]?.params[1]).toMatchObject({ minContextSlot: 100 });
        expect(simulations(other)[0]?.params[1]).toMatchObject({ minContextSlot: 100 });
        expect(await metricValue(metrics.rpcSlotOutliers, { endpoint: rpc.endpoints[0]!, direction: 'behind' })).toBe(1);

        // The second opinion too: asked only of the endpoint behind the floor, it is refused, never a decision.
        const err = await rejection(rpc.simulateTransactionElsewhere(new Uint8Array([1]), rpc.endpoints[1]!, signal()));
        expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && err.context).toMatchObject({ method: 'simulateTransaction', endpoint: rpc.endpoints[0] });
        expect(retriesAction(err)).toBe(true);
        expect(await metricValue(metrics.rpcSlotOutliers, { endpoint: rpc.endpoints[0]!, direction: 'behind' })).toBe(simulations(server).length);
        expect(simulations(server).every((call) => (call.params[1] as { minContextSlot?: number }).minContextSlot === 100)).toBe(true);
      } finally {
        await other.close();
      }
    });

    it('an answer without a context slot is invalid, not a simulation', async () => {
      const rpc = await setup(() => ({ result: { value: { err: null, logs: [], unitsConsumed: 5 } } }));
      const err = await rejection(rpc.simulateTransaction(new Uint8Array([1]), signal()));
      expect(err).toMatchObject({ code: 'CHAIN__RPC_FAILED', context: { method: 'simulateTransaction', kind: 'invalid_result' } });
    });
  });

  it('getRecentPrioritizationFees sends the writable accounts and returns slot and price', async () => {
    const rpc = await setup(() => ({
      result: [
        { slot: 5, prioritizationFee: 0 },
        { slot: 6, prioritizationFee: 20_000 },
      ],
    }));
    expect(await rpc.getRecentPrioritizationFees([address], signal())).toEqual([
      { slot: 5, prioritizationFee: 0 },
      { slot: 6, prioritizationFee: 20_000 },
    ]);
    expect(server?.calls[0]).toEqual({ method: 'getRecentPrioritizationFees', params: [[address.toBase58()]] });
  });

  it.each([
    ['simulateTransaction without unitsConsumed', 'simulateTransaction', { context: { slot: 1 }, value: { err: null } }],
    ['a negative prioritization fee', 'getRecentPrioritizationFees', [{ slot: 1, prioritizationFee: -1 }]],
    ['prioritization fees that are not an array', 'getRecentPrioritizationFees', { slot: 1 }],
  ])('%s -> CHAIN__RPC_FAILED invalid_result, not retried', async (_case, method, result) => {
    const rpc = await setup(() => ({ result }));
    const call =
      method === 'simulateTransaction'
        ? rpc.simulateTransaction(new Uint8Array([1]), signal())
        : rpc.getRecentPrioritizationFees([address], signal());
    const err = await rejection(call);
    expect(err).toMatchObject({ code: 'CHAIN__RPC_FAILED', context: { method, kind: 'invalid_result' } });
    expect(retriesAction(err)).toBe(false);
    expect(server?.calls).toHaveLength(1);
  });
});
