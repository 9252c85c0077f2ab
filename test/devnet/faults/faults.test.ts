import { Connection, Keypair } from '@solana/web3.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeTrackerHeader } from '../../../src/chain/codec/accounts.js';
import { mulberry32 } from '../../../devnet/faults/faults.js';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
import { depositSetup, rpc, signedWire } from '../rpc/helpers.js';
import { isDevnetError } from '../../../devnet/devnet-error.js';

let node: DevnetNode;
let connection: Connection;

beforeEach(async () => {
  node = await startDevnetNode({ name: 'source', chainId: 1, slotIntervalMs: 0 });
  connection = new Connection(node.url, { commitment: 'confirmed', disableRetryOnRateLimit: true });
});

afterEach(async () => {
  await node.close();
});

async function entryCount(tracker: Parameters<DevnetNode['getAccount']>[0]): Promise<bigint> {
  return decodeTrackerHeader(node.getAccount(tracker)!.data, 'DepositTracker', 'test').entryCount;
}

describe('per-method faults', () => {
  it('delays answers by latencyMs', async () => {
    node.faults.set({ methods: { getSlot: { latencyMs: 150 } } });
    const started = performance.now();
    expect((await rpc(node.url, 'getSlot')).body.result).toBe(node.slot);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    const quick = performance.now();
    await rpc(node.url, 'getHealth');
    expect(performance.now() - quick).toBeLessThan(140);
  });

  it('answers fixed counts of HTTP 500, then HTTP 429 with Retry-After, then JSON-RPC -32005, then normally', async () => {
    node.faults.set({ methods: { getSlot: { http500: 1, http429: 2, retryAfterSecs: 3, rpcErrors: 1 } } });
    const first = await rpc(node.url, 'getSlot');
    expect(first.status).toBe(500);
    for (let i = 0; i < 2; i += 1) {
      const limited = await rpc(node.url, 'getSlot');
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('3');
    }
    const unhealthy = await rpc(node.url, 'getSlot');
    expect(unhealthy.status).toBe(200);
    expect(unhealthy.body.error).toMatchObject({ code: -32005, data: { numSlotsBehind: expect.any(Number) } });
    expect((await rpc(node.url, 'getSlot')).body.result).toBe(node.slot);
    expect(node.faults.snapshot().methods['getSlot']).toMatchObject({ http500: 0, http429: 0, rpcErrors: 0 });
  });

  it('web3.js sees the injected faults as errors', async () => {
    node.faults.set({ methods: { getBalance: { http500: 1, rpcErrors: 1 } } });
    await expect(connection.getBalance(node.programId)).rejects.toThrow(/500/);
    await expect(connection.getBalance(node.programId)).rejects.toThrow(/-32005|behind/);
    await expect(connection.getBalance(node.programId)).resolves.toBeGreaterThan(0);
  });

  it('"*" applies to methods without an entry of their own', async () => {
    node.faults.set({ methods: { '*': { rpcErrors: 5 }, getHealth: {} } });
    expect((await rpc(node.url, 'getSlot')).body.error.code).toBe(-32005);
    expect((await rpc(node.url, 'getHealth')).body.result).toBe('ok');
  });

  it('draws error rates from a seeded PRNG: the same seed gives the same sequence', async () => {
    async function pattern(): Promise<string> {
      node.faults.set({ seed: 42, methods: { getSlot: { errorRate: 0.5, errorKind: 'http500' } } });
      let outcome = '';
      for (let i = 0; i < 24; i += 1) outcome += (await rpc(node.url, 'getSlot')).status === 500 ? 'x' : '.';
      return outcome;
    }
    const first = await pattern();
    node.faults.clear();
    expect(await pattern()).toBe(first);
    expect(first).toContain('x');
    expect(first).toContain('.');
    const random = mulberry32(42);
    const expected = Array.from({ length: 24 }, () => (random() < 0.5 ? 'x' : '.')).join('');
    expect(first).toBe(expected);
  });
});

describe('transaction faults', () => {
  it('loseResponses (http500): the transaction lands, the answer is HTTP 500', async () => {
    const setup = await depositSetup(node, connection);
    node.faults.set({ loseResponses: 1 });
    const wire = await signedWire(connection, [setup.deposit(5n)], [setup.payer]);
    const { status } = await rpc(node.url, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
    expect(status).toBe(500);
    expect(await entryCount(setup.tracker)).toBe(1n);
    const again = await rpc(node.url, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
    expect(again.body.error.data.err).toBe('AlreadyProcessed');
  });

  it('loseResponses (destroy): the transaction lands, the connection closes without an answer', async () => {
    const setup = await depositSetup(node, connection);
    node.faults.set({ loseResponses: 1, loseResponseMode: 'destroy' });
    const wire = await signedWire(connection, [setup.deposit(5n)], [setup.payer]);
    await expect(rpc(node.url, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64' }])).rejects.toThrow();
    expect(await entryCount(setup.tracker)).toBe(1n);
    expect(node.faults.snapshot().loseResponses).toBe(0);
  });

  it('dropTransactions: answered with the signature, never lands', async () => {
    const setup = await depositSetup(node, connection);
    node.faults.set({ dropTransactions: 1 });
    const signature = await connection.sendRawTransaction(await signedWire(connection, [setup.deposit(5n)], [setup.payer]));
    node.advanceSlots(200);
    expect((await connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0]).toBeNull();
    expect(await entryCount(setup.tracker)).toBe(0n);
    await connection.sendRawTransaction(await signedWire(connection, [setup.deposit(6n)], [setup.payer]));
    expect(await entryCount(setup.tracker)).toBe(1n);
  });

  it('pauseBlocks: slots stop, transactions wait; clearing the faults lands them', async () => {
    const setup = await depositSetup(node, connection);
    node.faults.set({ pauseBlocks: true });
    const slot = await connection.getSlot();
    const signature = await connection.sendRawTransaction(await signedWire(connection, [setup.deposit(5n)], [setup.payer]));
    expect((await connection.getSignatureStatuses([signature])).value[0]).toBeNull();
    expect(await connection.getSlot()).toBe(slot);
    expect(node.faults.snapshot().pauseBlocks).toBe(true);
    node.faults.clear();
    expect((await connection.getSignatureStatuses([signature])).value[0]?.err).toBeNull();
    expect(await connection.getSlot()).toBe(slot + 1);
  });
});

describe('fault settings', () => {
  it('the admin JSON-RPC methods set, read and clear faults; faults never apply to them', async () => {
    const set = await rpc(node.url, 'devnet_setFaults', [{ methods: { '*': { http500: 3 } }, dropTransactions: 2 }]);
    expect(set.body.result).toMatchObject({ methods: { '*': { http500: 3 } }, dropTransactions: 2, pauseBlocks: false });
    expect((await rpc(node.url, 'devnet_getFaults')).body.result.dropTransactions).toBe(2);
    expect((await rpc(node.url, 'getSlot')).status).toBe(500);
    const cleared = await rpc(node.url, 'devnet_clearFaults');
    expect(cleared.body.result).toMatchObject({ methods: {}, dropTransactions: 0, loseResponses: 0 });
    expect((await rpc(node.url, 'getSlot')).status).toBe(200);
  });

  it('rejects invalid settings, naming the field, over JSON-RPC and through the typed API', async () => {
    const cases: Array<[unknown, string]> = [
      [{ methods: { getSlot: { latencyMs: -1 } } }, 'faults.methods.getSlot.latencyMs'],
      [{ methods: { getSlto: { http500: 1 } } }, 'faults.methods.getSlto'],
      [{ loseResponse: 1 }, 'loseResponse'],
      [{ methods: { getSlot: { errorRate: 2 } } }, 'errorRate'],
    ];
    for (const [settings, field] of cases) {
      const { body } = await rpc(node.url, 'devnet_setFaults', [settings]);
      expect(body.error.code).toBe(-32602);
      expect(body.error.message).toContain(field);
      const thrown = (() => {
        try {
          node.faults.set(settings as never);
        } catch (err) {
          return err;
        }
        return undefined;
      })();
      expect(isDevnetError(thrown, 'DEVNET__INVALID_OPTION')).toBe(true);
    }
    expect(node.faults.snapshot()).toMatchObject({ methods: {}, loseResponses: 0 });
  });

  it('can be turned off: without admin methods devnet_setFaults is not found', async () => {
    const plain = await startDevnetNode({ name: 'target', chainId: 2, slotIntervalMs: 0, adminMethods: false });
    try {
      expect((await rpc(plain.url, 'devnet_setFaults', [{}])).body.error.code).toBe(-32601);
    } finally {
      await plain.close();
    }
  });
});

describe('slot faults and a second endpoint', () => {
  it('a second endpoint serves the same chain; slotLag reports slots behind and refuses minContextSlot above them with -32016', async () => {
    node.advanceSlots(300);
    const replica = await node.addEndpoint();
    expect((await rpc(replica.url, 'getSlot')).body.result).toBe(node.slot);
    replica.faults.set({ slotLag: 200 });
    expect((await rpc(replica.url, 'getSlot')).body.result).toBe(node.slot - 200);
    expect((await rpc(node.url, 'getSlot')).body.result).toBe(node.slot);
    const balance = await rpc(replica.url, 'getBalance', [node.programId.toBase58()]);
    expect(balance.body.result).toMatchObject({ context: { slot: node.slot - 200 } });
    const tooNew = await rpc(replica.url, 'getBalance', [node.programId.toBase58(), { minContextSlot: node.slot - 199 }]);
    expect(tooNew.body.error).toMatchObject({ code: -32016 });
    expect(replica.faults.snapshot()).toMatchObject({ slotLag: 200, frozenAtSlot: null });
  });

  it('noHistory: history reads answer -32011 as Agave does; statuses come from the status cache (300 slots) only', async () => {
    const address = Keypair.generate().publicKey;
    const signature = node.airdrop(address, 1);
    node.faults.set({ noHistory: true });
    const refused = { code: -32011, message: 'Transaction history is not available from this node' };
    expect((await rpc(node.url, 'getSignaturesForAddress', [address.toBase58()])).body.error).toEqual(refused);
    expect((await rpc(node.url, 'getTransaction', [signature, { encoding: 'base64' }])).body.error).toEqual(refused);
    expect((await rpc(node.url, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }])).body.error).toEqual(refused);
    expect((await rpc(node.url, 'getSignatureStatuses', [[signature]])).body.result.value[0]).toMatchObject({ err: null });
    node.advanceSlots(300);
    expect((await rpc(node.url, 'getSignatureStatuses', [[signature]])).body.result.value).toEqual([null]);
    node.faults.set({ noHistory: false });
    expect((await rpc(node.url, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }])).body.result.value[0]).toMatchObject({
      err: null,
    });
  });

  it('alternateBehindSlots: about half the calls are answered by a backend that many slots behind: its slot, its accounts, none of the newer transactions', async () => {
    const replica = await node.addEndpoint();
    replica.faults.set({ alternateBehindSlots: 40, seed: 7 });
    // The backend keeps a copy of the chain's state at the first call in each slot.
    for (let i = 0; i < 60; i++) {
      node.advanceSlots(1);
      await rpc(replica.url, 'getSlot');
    }
    const funded = Keypair.generate().publicKey;
    const signature = node.airdrop(funded, 5_000_000);
    const answers = [];
    for (let i = 0; i < 40; i++) answers.push((await rpc(replica.url, 'getBalance', [funded.toBase58()])).body.result);
    const fresh = answers.filter((answer) => answer.context.slot === node.slot);
    const behind = answers.filter((answer) => answer.context.slot === node.slot - 40);
    expect(fresh.length + behind.length).toBe(40);
    expect(fresh.length).toBeGreaterThan(5);
    expect(behind.length).toBeGreaterThan(5);
    // Old state at its old slot: the lagging backend has not seen the airdrop.
    for (const answer of fresh) expect(answer.value).toBe(5_000_000);
    for (const answer of behind) expect(answer.value).toBe(0);
    const statuses = [];
    for (let i = 0; i < 20; i++) statuses.push((await rpc(replica.url, 'getSignatureStatuses', [[signature]])).body.result);
    for (const answer of statuses) expect(answer.value[0] === null).toBe(answer.context.slot === node.slot - 40);
    const refusals = [];
    for (let i = 0; i < 10; i++)
      refusals.push((await rpc(replica.url, 'getBalance', [node.programId.toBase58(), { minContextSlot: node.slot }])).body.error?.code);
    expect(refusals).toContain(-32016);
    expect(refusals).toContain(undefined);
    replica.faults.set({ alternateBehindSlots: 0 });
    for (let i = 0; i < 5; i++)
      expect((await rpc(replica.url, 'getBalance', [funded.toBase58()])).body.result).toMatchObject({
        context: { slot: node.slot },
        value: 5_000_000,
      });
  });

  it('alternateBehindSlots: a lagging answer at slot S holds every transaction whose status names a slot up to S, and none later', async () => {
    const replica = await node.addEndpoint();
    replica.faults.set({ alternateBehindSlots: 3, seed: 11 });
    const funded = Keypair.generate().publicKey;
    let signature = '';
    // A call in each slot makes the backend's copy; the airdrop lands in a slot whose copy was
    // already made by a call before it (the open slot's block takes it).
    for (let i = 0; i < 12; i++) {
      await rpc(replica.url, 'getSlot');
      if (i === 6) signature = node.airdrop(funded, 5_000_000);
      else node.advanceSlots(1);
    }
    const landedAt = (await rpc(node.url, 'getSignatureStatuses', [[signature]])).body.result.value[0].slot as number;
    // A backend lagging to the landing slot itself, then to the one before it.
    for (const viewSlot of [landedAt, landedAt - 1]) {
      replica.faults.set({ alternateBehindSlots: node.slot - viewSlot });
      const answers = [];
      for (let i = 0; i < 30; i++) answers.push((await rpc(replica.url, 'getBalance', [funded.toBase58()])).body.result);
      expect(answers.filter((answer) => answer.context.slot === viewSlot).length).toBeGreaterThan(3);
      for (const answer of answers)
        expect({ slot: answer.context.slot, value: answer.value }).toEqual({
          slot: answer.context.slot,
          value: answer.context.slot >= landedAt ? 5_000_000 : 0,
        });
    }
  });

  it('httpStatus: every call answers 403 (admin methods aside) until set to null', async () => {
    node.faults.set({ httpStatus: 403 });
    const refused = await rpc(node.url, 'getSlot');
    expect(refused.status).toBe(403);
    expect(refused.body).toBe('403 Forbidden');
    expect((await rpc(node.url, 'devnet_getFaults')).body.result).toMatchObject({ httpStatus: 403 });
    expect((await rpc(node.url, 'devnet_setFaults', [{ httpStatus: null }])).status).toBe(200);
    expect((await rpc(node.url, 'getSlot')).body.result).toBe(node.slot);
  });

  it('freezeSlot stops the reported slot until cleared', async () => {
    node.advanceSlots(10);
    const frozenAt = node.slot;
    node.faults.set({ freezeSlot: true });
    node.advanceSlots(5);
    expect((await rpc(node.url, 'getSlot')).body.result).toBe(frozenAt);
    expect(node.faults.snapshot().frozenAtSlot).toBe(frozenAt);
    node.faults.clear();
    expect((await rpc(node.url, 'getSlot')).body.result).toBe(frozenAt + 5);
  });

  it('unknown fault keys stay errors', () => {
    expect(() => node.faults.set({ slotLagg: 3 } as never)).toThrow(/slotLagg|Unrecognized/);
  });
});
