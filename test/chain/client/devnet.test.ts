import { ownNextIndex } from '../../../src/chain/port/authority-position.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ComputeBudgetProgram, Keypair, PublicKey, TransactionInstruction, VersionedTransaction, type Commitment } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { AckDepositVote, AckWithdrawVote, BridgeChains, BridgeView } from '../../../src/chain/port/bridge-chains.js';
import { createBridgeChains } from '../../../src/chain/client/create-chain-client.js';
import { initNoncePools } from '../../support/authority.js';
import { FileKeySigner } from '../../../src/signer/file-key-signer.js';
import { depositInstruction } from '../../../devnet/instructions.js';
import { TRACKER_HEADER_SIZE } from '../../../src/chain/codec/layout.js';
import { decodeTrackerHeader } from '../../../src/chain/codec/tracker-header.js';
import { depositResultToWire } from '../../../src/chain/port/result-wire.js';
import { AGAVE_COMMITMENT_LAGS } from '../../../devnet/bank/commitment-banks.js';
import { startChainPair, type ChainPair } from '../../../devnet/chain-pair.js';
import { COMPUTE_BUDGET_PROGRAM_ID } from '../../../devnet/bank/compute-budget.js';
import { loadedAccountsDataSize } from '../../../devnet/bank/loaded-accounts.js';
import type { DevnetNode } from '../../../devnet/node.js';
import { UNREAD_ACCOUNT_ALLOWANCE } from '../../../src/chain/client/budget/loaded-accounts.js';
import { USED_HEADROOM } from '../../../src/chain/client/budget/compute-budget.js';
import { nonceAddress } from '../../../src/chain/nonce-account.js';
import bs58 from 'bs58';
import { bootstrapWorld, type World } from '../../../devnet/world/bootstrap.js';
import { readKeypairFile } from '../../../devnet/world/keypair-files.js';
import { devnetConnection, submitTransaction } from '../../../devnet/world/submit.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { captureLogs } from '../../support/log-capture.js';
import { READ_LIMITS, gaugeValue } from './bridge-fixture.js';
import { metricValue } from '../../support/metric-value.js';
import { waitFor } from '../../support/wait-for.js';
import { inSetupSlots } from '../../support/setup-slots.js';

/**
 * createBridgeChains over real HTTP against the devnet: the bridge program, faults included, on
 * Agave's banks (confirmed 2 and finalized 32 slots behind the head, 20 ms slots): a test that
 * reads the source after writing it waits for the finalized bank first (`finality`).
 */

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TIMING = { pollIntervalMs: 25, rebroadcastIntervalMs: 150, confirmTimeoutMs: 20_000 };

interface Bridge {
  pair: ChainPair;
  world: World;
  authorities: Keypair[];
}

/** On Agave's banks: confirmed 2 and finalized 32 slots behind the head. */
async function bridge(options: { capacity: number; slotIntervalMs?: number }): Promise<Bridge> {
  const pair = await startChainPair({ slotIntervalMs: options.slotIntervalMs ?? 20, commitmentLags: AGAVE_COMMITMENT_LAGS });
  cleanups.push(() => pair.close());
  const dir = await mkdtemp(join(tmpdir(), 'chain-client-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const world = await inSetupSlots(pair, () => bootstrapWorld(pair, { authorities: 3, threshold: 2, capacity: options.capacity, dir }));
  const authorities = await Promise.all(world.authorities.map(async (a) => (await readKeypairFile(a.keypairPath))!));
  return { pair, world, authorities };
}

function chainsFor(
  b: Bridge,
  authority: Keypair,
  sourceReadCommitment: Commitment = 'finalized',
  targetRpcFallbackUrls: string[] = [],
  nonceAccounts = 0,
): { chains: BridgeChains; metrics: Metrics } {
  const metrics = createMetrics(new Registry());
  const programId = new PublicKey(b.world.programId);
  const chains = createBridgeChains(
    {
      sourceRpcUrl: b.pair.source.url,
      targetRpcUrl: b.pair.target.url,
      targetRpcFallbackUrls,
      sourceChainId: b.world.source.chainId,
      targetChainId: b.world.target.chainId,
      sourceProgramId: programId,
      targetProgramId: programId,
      signer: new FileKeySigner(authority),
      rpcTimeoutMs: 5_000,
      sourceReadCommitment,
      priorityFee: { minMicroLamports: 0, maxMicroLamports: 100_000 },
      nonceAccounts,
      metrics,
      logger: captureLogs('info').logger,
    },
    { submitTiming: TIMING },
  );
  return { chains, metrics };
}

async function deposit(b: Bridge, count: number, mint: string): Promise<void> {
  const depositor = Keypair.generate();
  b.pair.source.airdrop(depositor.publicKey, 1_000_000_000);
  // Preflight reads the confirmed bank: the airdrop must reach it.
  b.pair.source.advanceSlots(b.pair.source.bank.commitmentLags.confirmedLagSlots);
  const signal = new AbortController().signal;
  const connection = devnetConnection(b.pair.source.url, signal);
  // Sent together, as a block holds what arrives within its slot: each waits for the confirmed bank.
  const deposits = Array.from({ length: count }, (_, i) => {
    const ix = depositInstruction({
      programId: new PublicKey(b.world.programId),
      depositor: depositor.publicKey,
      depositTracker: new PublicKey(b.world.source.depositTracker),
      amount: 500n + BigInt(i),
      recipient: Keypair.generate().publicKey.toBase58(),
      sourceMint: mint,
    });
    return submitTransaction(connection, [ix], [depositor], { chain: 'source', step: 'deposit', signal });
  });
  await Promise.all(deposits);
  await finality(b);
}

/**
 * Until both chains' finalized banks hold what their heads hold now: the client reads the source
 * at finalized (BRIDGE_SOURCE_READ_COMMITMENT's default), 32 slots behind on Agave's banks. At
 * most the finalized lag's slots, 4x for a loaded machine, plus 1 s.
 */
async function finality(b: Bridge): Promise<void> {
  const chains = [b.pair.source, b.pair.target];
  const heads = chains.map((node) => node.slot);
  const { finalizedLagSlots } = b.pair.source.bank.commitmentLags;
  await waitFor(() => chains.every((node, i) => node.bank.slotOf('finalized') >= heads[i]!), {
    timeoutMs: 4 * finalizedLagSlots * b.pair.source.bank.slotIntervalMs + 1_000,
    intervalMs: 5,
    what: 'the finalized banks to reach the heads',
  });
}

/** ack_deposit votes that copy the source entries from this authority's destination position. */
function ackDepositVotes(view: BridgeView): AckDepositVote[] {
  const next = ownNextIndex(view.withdrawals.header, view.authority, { chain: 'target' });
  return [...view.deposits.entries]
    .map(([index, entry]) => ({ entry, index }))
    .filter(({ index }) => index >= next)
    .map(({ entry, index }) => ({ index, approve: true, amount: entry.amount.toString(), recipient: entry.recipient, sourceMint: entry.sourceMint }));
}

function ackWithdrawVotes(view: BridgeView): AckWithdrawVote[] {
  return [...view.withdrawals.entries]
    .map(([index, entry]) => ({ entry, index }))
    .filter(({ entry }) => entry.status === 'Finalized')
    .map(({ entry, index }) => ({ index, approve: true, result: depositResultToWire(entry.result) }));
}

const signal = () => new AbortController().signal;

/** The SetLoadedAccountsDataSizeLimit a transaction asked, if any. */
function loadedLimitOf(wire: Uint8Array): number | undefined {
  const { message } = VersionedTransaction.deserialize(wire);
  const keys = message.staticAccountKeys.map((key) => key.toBase58());
  const limit = message.compiledInstructions.find((ix) => keys[ix.programIdIndex] === COMPUTE_BUDGET_PROGRAM_ID && ix.data[0] === 4);
  return limit === undefined ? undefined : Buffer.from(limit.data).readUInt32LE(1);
}

/**
 * The `count` crank transactions that landed on `node` each asked a loaded-accounts data-size
 * limit of what the devnet counts them to load, plus at most the allowance of each account the
 * crank does not read (the authority, the ComputeBudget program, a token pair, a depositor).
 */
function expectCountedLoads(node: DevnetNode, count: number): void {
  const limits = [...node.bank.landedTransactions()].flatMap(({ wire }) => {
    const limit = loadedLimitOf(wire);
    if (limit === undefined) return [];
    const keys = VersionedTransaction.deserialize(wire).message.staticAccountKeys.map((key) => key.toBase58());
    const loads = loadedAccountsDataSize(keys, (address) => node.bank.account(address));
    return [{ limit, loads, unread: 4 * UNREAD_ACCOUNT_ALLOWANCE }];
  });
  expect(limits).toHaveLength(count);
  for (const { limit, loads, unread } of limits) {
    expect(limit).toBeGreaterThanOrEqual(loads);
    expect(limit).toBeLessThanOrEqual(loads + unread);
  }
}

describe('createBridgeChains against the devnet', () => {
  it('carries transfers through ack_deposit, ack_withdraw and cleanup_deposit', async () => {
    const b = await bridge({ capacity: 200 });
    await deposit(b, 3, b.world.tokenPairs.frozen.sourceMint);
    const first = chainsFor(b, b.authorities[0]!);
    const second = chainsFor(b, b.authorities[1]!);

    const view = await first.chains.readState(signal(), READ_LIMITS);
    expect([...view.deposits.entries.values()].map((e) => e.status)).toEqual(['Initialized', 'Initialized', 'Initialized']);
    expect(view.withdrawals.entries.size).toBe(0);
    const proposals = ackDepositVotes(view);
    expect((await first.chains.ackDeposits(proposals, signal())).transactions.flatMap((t) => t.indices)).toEqual([0, 1, 2]);
    await second.chains.ackDeposits(ackDepositVotes(await second.chains.readState(signal(), READ_LIMITS)), signal());

    const afterVotes = await first.chains.readState(signal(), READ_LIMITS);
    expect([...afterVotes.withdrawals.entries.values()].map((e) => [e.status, e.result])).toEqual(
      Array.from({ length: 3 }, () => ['Finalized', { kind: 'Rejected', reason: 'TokenPairFrozen' }]),
    );
    for (const { chains } of [first, second]) {
      const votes = ackWithdrawVotes(await chains.readState(signal(), READ_LIMITS));
      expect(votes).toHaveLength(3);
      await chains.ackWithdraws(votes, signal());
    }

    await finality(b);
    const finalized = await first.chains.readState(signal(), READ_LIMITS);
    expect([...finalized.deposits.entries.values()].map((e) => e.status)).toEqual(['Finalized', 'Finalized', 'Finalized']);
    const cleanup = await second.chains.cleanupDeposits([0, 1, 2], signal());
    expect(cleanup.completed).toEqual([0, 1, 2]);
    expect(await first.chains.cleanupDeposits([0, 1, 2], signal())).toEqual({ transactions: [], completed: [], alreadyDone: [0, 1, 2] });

    await finality(b);
    const settled = await first.chains.readState(signal(), READ_LIMITS);
    expect(settled.deposits.header.settledPrefix).toBe(3n);
    expect(settled.deposits.entries.size).toBe(0);
    expect(settled.withdrawals.entries.size).toBe(0);
    expectCountedLoads(b.pair.source, 3);
    expectCountedLoads(b.pair.target, 2);
  });

  it('a lost sendTransaction response lands the votes once', async () => {
    const b = await bridge({ capacity: 50 });
    await deposit(b, 2, b.world.tokenPairs.normal.sourceMint);
    const { chains } = chainsFor(b, b.authorities[0]!);
    const votes = ackDepositVotes(await chains.readState(signal(), READ_LIMITS));
    b.pair.target.faults.set({ loseResponses: 1, loseResponseMode: 'destroy' });
    const report = await chains.ackDeposits(votes, signal());
    expect(report.transactions).toHaveLength(1);
    const after = await chains.readState(signal(), READ_LIMITS);
    expect(after.withdrawals.header.entryCount).toBe(2n);
    expect(after.withdrawals.header.votes[0]!.nextIndex).toBe(2n);
    // Sending the same votes again is refused by the program, not landed a second time.
    await expect(chains.ackDeposits(votes, signal())).rejects.toMatchObject({
      code: 'CHAIN__FAILED_TO_SUBMIT',
      context: { programError: 'VoteOutOfOrder' },
    });
  });

  it('dropped transactions: rebroadcast until the blockhash expired, then a retryable failure; the next attempt lands', async () => {
    const b = await bridge({ capacity: 50, slotIntervalMs: 2 });
    await deposit(b, 1, b.world.tokenPairs.normal.sourceMint);
    const { chains, metrics } = chainsFor(b, b.authorities[0]!);
    const votes = ackDepositVotes(await chains.readState(signal(), READ_LIMITS));
    b.pair.target.faults.set({ dropTransactions: 100_000 });
    await expect(chains.ackDeposits(votes, signal())).rejects.toMatchObject({
      code: 'CHAIN__FAILED_TO_SUBMIT',
      context: { outcome: 'not_landed' },
      message: expect.stringMatching(/not landed: its blockhash expired .*accepted it \d+ of \d+ sends but it never landed/),
    });
    expect(await metricValue(metrics.transactionRebroadcasts, { chain: 'target' })).toBeGreaterThan(0);
    expect(await metricValue(metrics.transactionResigns, { chain: 'target', reason: 'expired' })).toBe(1);
    b.pair.target.faults.set({ dropTransactions: 0 });
    const report = await chains.ackDeposits(votes, signal());
    expect(report.transactions).toHaveLength(1);
    const after = await chains.readState(signal(), READ_LIMITS);
    expect(after.withdrawals.header.entryCount).toBe(1n);
    expect(after.withdrawals.header.votes[0]!.nextIndex).toBe(1n);
  });

  it('a preflight program error names the PROTOCOL.md error, not retryable', async () => {
    const b = await bridge({ capacity: 50 });
    await deposit(b, 2, b.world.tokenPairs.normal.sourceMint);
    const { chains } = chainsFor(b, b.authorities[0]!);
    const votes = ackDepositVotes(await chains.readState(signal(), READ_LIMITS));
    await expect(chains.ackDeposits(votes.slice(1), signal())).rejects.toMatchObject({
      code: 'CHAIN__FAILED_TO_SUBMIT',
      context: { outcome: 'refused', programError: 'VoteOutOfOrder', customCode: 6001, index: 1, landedSignatures: [] },
    });
  });

  it('HTTP 429 and 500 from the node are retried; a read failing on every try is a retryable read failure', async () => {
    const b = await bridge({ capacity: 50 });
    const { chains, metrics } = chainsFor(b, b.authorities[0]!);
    b.pair.source.faults.set({ methods: { getAccountInfo: { http429: 1, retryAfterSecs: 0 } } });
    // The destination's header comes with its nonce pool in one getMultipleAccounts.
    b.pair.target.faults.set({ methods: { getMultipleAccounts: { http500: 1 } } });
    expect((await chains.readState(signal(), READ_LIMITS)).deposits.entries.size).toBe(0);
    const retries = (await metrics.rpcRetries.get()).values.map(({ labels, value }) => ({ ...labels, value }));
    expect(retries).toEqual(
      expect.arrayContaining([
        { chain: 'source', method: 'getAccountInfo', value: 1 },
        { chain: 'target', method: 'getMultipleAccounts', value: 1 },
      ]),
    );
    b.pair.source.faults.set({ methods: { getAccountInfo: { errorRate: 1, errorKind: 'http429', retryAfterSecs: 0 } } });
    await expect(chains.readState(signal(), READ_LIMITS)).rejects.toMatchObject({
      code: 'CHAIN__RPC_FAILED',
      context: { kind: 'http', status: 429 },
    });
    b.pair.source.faults.clear();
    b.pair.target.faults.set({ methods: { getMultipleAccounts: { errorRate: 1, errorKind: 'http500' } } });
    await expect(chains.readState(signal(), READ_LIMITS)).rejects.toMatchObject({
      code: 'CHAIN__RPC_FAILED',
      context: { kind: 'http', status: 500 },
    });
    b.pair.target.faults.clear();
    expect((await chains.readState(signal(), READ_LIMITS)).deposits.entries.size).toBe(0);
  });

  it('read cost: kilobytes for 10 pending entries on a 50,000-entry tracker, as on a small one', async () => {
    const bytesRead = async (capacity: number, settled: number) => {
      const b = await bridge({ capacity });
      b.pair.seedSettledDeposits(settled);
      await deposit(b, 10, b.world.tokenPairs.normal.sourceMint);
      const { chains, metrics } = chainsFor(b, b.authorities[0]!);
      const view = await chains.readState(signal(), READ_LIMITS);
      expect([...view.deposits.entries.keys()]).toEqual(Array.from({ length: 10 }, (_, i) => settled + i));
      return {
        source: await gaugeValue(metrics, 'lastCycleAccountBytes', 'source'),
        target: await gaugeValue(metrics, 'lastCycleAccountBytes', 'target'),
      };
    };
    const large = await bytesRead(50_000, 49_980);
    const small = await bytesRead(100, 5);
    expect(large).toEqual({ source: 2 * TRACKER_HEADER_SIZE + 10 * 160, target: TRACKER_HEADER_SIZE });
    expect(small).toEqual(large);
  });
});

/** What the first authority's transactions on the destination chain paid and consumed, oldest first (the bank's record, as getTransaction serves it). */
const ownLanded = (b: Bridge) =>
  [...b.pair.target.bank.landedTransactions()].filter((landed) => landed.feePayer === b.authorities[0]!.publicKey.toBase58());

/** Source entries 0..count-1 Finalized (rejected: a frozen mint) by authorities 0 and 1, at confirmed. */
async function finalizedDeposits(b: Bridge, count: number): Promise<void> {
  await deposit(b, count, b.world.tokenPairs.frozen.sourceMint);
  const voters = [0, 1].map((slot) => chainsFor(b, b.authorities[slot]!, 'confirmed').chains);
  for (const chains of voters) await chains.ackDeposits(ackDepositVotes(await chains.readState(signal(), READ_LIMITS)), signal());
  for (const chains of voters) await chains.ackWithdraws(ackWithdrawVotes(await chains.readState(signal(), READ_LIMITS)), signal());
}

/** The source's DepositTracker header as the bank of `commitment` holds it. */
function depositHeaderAt(b: Bridge, commitment: 'processed' | 'confirmed') {
  const address = b.world.source.depositTracker;
  return decodeTrackerHeader(b.pair.source.bank.at(commitment).account(address)!.data, 'DepositTracker', address);
}

describe("cleanup_deposit on Agave's banks", () => {
  it("an entry another payer's cleanup has processed, not yet confirmed, is not sent again: no fee paid for a certain CleanupAlreadyCompleted", async () => {
    const b = await bridge({ capacity: 50 });
    await finalizedDeposits(b, 2);
    const first = chainsFor(b, b.authorities[0]!);
    const second = chainsFor(b, b.authorities[2]!);
    // The first payer's cleanup lands at the head, and the chain stops there (paused in the same
    // call, before the next slot) with the confirmed bank behind it: the second payer decides
    // while the race is certain.
    const { bank } = b.pair.source;
    const submit = bank.submit.bind(bank);
    bank.submit = (tx, signaturesVerified, landAfterSlots) => {
      submit(tx, signaturesVerified, landAfterSlots);
      if (depositHeaderAt(b, 'processed').settledPrefix === 2n) bank.pause();
    };
    const firstCleanup = first.chains.cleanupDeposits([0, 1], signal());
    await waitFor(() => bank.paused, { timeoutMs: 10_000, what: "the first payer's cleanup at processed" });
    bank.submit = submit;
    expect(depositHeaderAt(b, 'confirmed').settledPrefix).toBe(0n);
    let secondDone = false;
    const secondCleanup = second.chains.cleanupDeposits([0, 1], signal()).finally(() => (secondDone = true));
    const sends = async () => metricValue(second.metrics.rpcRequests, { chain: 'source', method: 'sendTransaction' });
    await waitFor(async () => secondDone || (await sends()) > 0, { timeoutMs: 10_000, what: "the second payer's decision" });
    bank.resume();

    expect(await secondCleanup).toEqual({ transactions: [], completed: [], alreadyDone: [] });
    expect((await firstCleanup).completed).toEqual([0, 1]);
    const failed = [...b.pair.source.bank.landedTransactions()].filter((landed) => landed.err !== null);
    expect(failed, 'cleanup transactions landed failing').toHaveLength(0);
    expect(await sends()).toBe(0);
    // The next call, once the first payer's cleanup is confirmed, reports it done.
    expect(await second.chains.cleanupDeposits([0, 1], signal())).toEqual({ transactions: [], completed: [], alreadyDone: [0, 1] });
  });
});

describe('a simulation above the compute ceiling, with a second destination endpoint', () => {
  /** A bridge with 6 deposits, a second destination endpoint, and the ceiling lowered by one honest landing of 3 votes. */
  async function measured() {
    const b = await bridge({ capacity: 50 });
    await deposit(b, 6, b.world.tokenPairs.normal.sourceMint);
    const second = await b.pair.target.addEndpoint();
    cleanups.push(() => second.close());
    const { chains } = chainsFor(b, b.authorities[0]!, 'finalized', [second.url]);
    const votes = ackDepositVotes(await chains.readState(signal(), READ_LIMITS));
    await chains.ackDeposits(votes.slice(0, 3), signal());
    const unitLimits = () =>
      [...b.pair.target.bank.landedTransactions()]
        .filter((landed) => landed.feePayer === b.authorities[0]!.publicKey.toBase58())
        .map((landed) => landed.computeUnitLimit);
    const [shown] = unitLimits();
    return { b, second, chains, rest: votes.slice(3), shown: shown!, unitLimits };
  }

  it('one node that inflates it cannot raise the ceiling: the limit stays at 3x what the landed one consumed', async () => {
    const { b, chains, rest, shown, unitLimits } = await measured();
    const [used] = ownLanded(b).map((landed) => landed.computeUnitsConsumed);
    b.pair.target.faults.set({ simulateUnitsConsumed: 1_400_000 });
    await chains.ackDeposits(rest, signal());
    expect(unitLimits()).toEqual([shown, 3 * Math.ceil((USED_HEADROOM * used!) / 3)]);
  });

  it('a simulation that lies from the start: after one landing, no transaction asks more than 4x what it used (getTransaction meta)', async () => {
    const b = await bridge({ capacity: 50 });
    await deposit(b, 9, b.world.tokenPairs.normal.sourceMint);
    b.pair.target.faults.set({ simulateUnitsConsumed: 1_400_000 });
    const { chains } = chainsFor(b, b.authorities[0]!);
    const votes = ackDepositVotes(await chains.readState(signal(), READ_LIMITS));
    for (const batch of [votes.slice(0, 4), votes.slice(4, 5), votes.slice(5, 9)]) await chains.ackDeposits(batch, signal());
    const [first, ...later] = ownLanded(b);
    // Before any landing only the runtime's own reservation bounds it: 200,000 per vote (the 800,000 for 96,450 used).
    expect(first).toMatchObject({ err: null, computeUnitLimit: 4 * 200_000 });
    expect(later).toHaveLength(2);
    for (const landed of later) {
      expect(landed.err).toBeNull();
      expect(landed.computeUnitLimit).toBeLessThanOrEqual(4 * landed.computeUnitsConsumed);
    }
  });

  it('both endpoints show a 6x dearer program: the ceiling moves and the votes land without a refusal first', async () => {
    const { b, chains, rest, shown, unitLimits } = await measured();
    b.pair.target.setComputeCostScale(6);
    const report = await chains.ackDeposits(rest, signal());
    expect(report.transactions).toHaveLength(1);
    const [, raised] = unitLimits();
    expect(raised).toBeGreaterThan(2 * shown);
    const { units } = b.pair.target.bank.computeCosts;
    expect(raised).toBe(Math.ceil((3 * units.ack_deposit + 3 * 150) * 1.15));
  });
});

describe('a transaction whose accounts outgrew its loaded-accounts limit after it was measured', () => {
  it.each([
    ['blockhash', 0],
    ['nonce', 1],
  ])(
    '%s mode: lands fee-only (SIMD-0191); the action re-sizes to the 64 MiB default and sends it again in the same call, which lands',
    async (mode, nonceAccounts) => {
      // Nonce mode on Agave's banks: the resend is simulated at confirmed, a frozen bank, as on a cluster.
      // On one open bank it would be simulated in the very slot the fee-only advance landed in, which
      // Agave refuses (NonceBlockhashNotExpired) and a client reading at confirmed never meets.
      const b = await bridge({ capacity: 50 });
      await deposit(b, 2, b.world.tokenPairs.normal.sourceMint);
      const { chains } = chainsFor(b, b.authorities[0]!, 'finalized', [], nonceAccounts);
      if (nonceAccounts > 0) {
        await initNoncePools(b.world, 0, b.authorities[0]!, AbortSignal.timeout(20_000), { nonceAccounts });
      }
      const view = await chains.readState(signal(), READ_LIMITS);
      expect(chains.lifetimeModes().target).toBe(mode);
      const votes = ackDepositVotes(view);
      const lane = nonceAddress(b.authorities[0]!.publicKey, b.world.target.chainId, 0);
      const laneValue = () => b.pair.target.getAccount(lane)?.data.slice(40, 72);
      const valueBefore = laneValue();
      const setUp = ownLanded(b).length;
      const node = b.pair.target;
      // In flight 25 slots (about 0.5 s): the program account grows (an upgrade) after the preflight, before the landing.
      node.faults.set({ landAfterSlots: 25 });
      const grown = (async () => {
        const until = Date.now() + 10_000;
        while (node.bank.inFlight === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 2));
        const program = node.bank.account(b.world.programId)!;
        node.bank.journal().create(b.world.programId, { ...program, data: new Uint8Array(20_000) });
      })();
      const report = await chains.ackDeposits(votes, signal());
      await grown;
      const [failed, landed, ...rest] = ownLanded(b).slice(setUp);
      expect(rest).toEqual([]);
      expect(failed).toMatchObject({ err: 'MaxLoadedAccountsDataSizeExceeded', computeUnitsConsumed: 0, fee: 5_000n });
      expect(landed).toMatchObject({ err: null });
      // Both are reported (the fee-only one as paid, never as landed votes), in one call.
      expect(report.transactions.map((t) => t.indices)).toEqual([votes.map((v) => v.index), votes.map((v) => v.index)]);
      expect((await chains.readState(signal(), READ_LIMITS)).withdrawals.header.entryCount).toBe(2n);
      expect(loadedLimitOf(landed!.wire)).toBe(64 * 1024 * 1024);
      expect(loadedLimitOf(failed!.wire)).toBeLessThan(20_000);
      if (mode === 'nonce') {
        // Both were durable-nonce transactions of the lane: the fee-only one advanced it (SIMD-0191), and the resend was signed against the new value.
        const recentBlockhashOf = (wire: Uint8Array) => VersionedTransaction.deserialize(wire).message.recentBlockhash;
        expect(recentBlockhashOf(failed!.wire)).toBe(bs58.encode(valueBefore!));
        expect(recentBlockhashOf(landed!.wire)).not.toBe(recentBlockhashOf(failed!.wire));
        expect(laneValue()).not.toEqual(valueBefore);
      }
    },
  );
});

describe('readAuthority and plannedFees against the devnet', () => {
  const requests = async (metrics: Metrics, chain: string, method: string): Promise<number> =>
    (await metrics.rpcRequests.get()).values.find((v) => v.labels.chain === chain && v.labels.method === method)?.value ?? 0;

  it('reports what the key signed since the previous read, marks what another process signed, ignores transfers to it', async () => {
    const b = await bridge({ capacity: 50 });
    const key = b.authorities[0]!;
    const here = chainsFor(b, key);
    const elsewhere = chainsFor(b, key);

    // The first read only sets the baseline: the key's earlier history (bootstrap) is not reported.
    const first = await here.chains.readAuthority(signal());
    expect(first.source.transactions).toEqual([]);
    expect(first.target.transactions).toEqual([]);
    expect(first.target.balance).toBe(Number(b.pair.target.getAccount(key.publicKey)!.lamports));
    expect(await gaugeValue(here.metrics, 'authorityBalance', 'target')).toBe(first.target.balance);
    await elsewhere.chains.readAuthority(signal());

    await deposit(b, 2, b.world.tokenPairs.normal.sourceMint);
    const votes = ackDepositVotes(await elsewhere.chains.readState(signal(), READ_LIMITS));
    const foreign = (await elsewhere.chains.ackDeposits(votes.slice(0, 1), signal())).transactions.map((t) => t.signature);
    const own = (await here.chains.ackDeposits(votes.slice(1), signal())).transactions.map((t) => t.signature);
    // A transaction that lists the key without its signature (as a transfer funding it does) is not the key's use.
    const funder = Keypair.generate();
    b.pair.target.airdrop(funder.publicKey, 1_000_000_000);
    // The send's preflight runs on the confirmed bank, 2 slots behind the head the airdrop wrote.
    const airdropSlot = b.pair.target.slot;
    await waitFor(() => b.pair.target.bank.slotOf('confirmed') >= airdropSlot, {
      timeoutMs: 5_000,
      intervalMs: 5,
      what: "the funder's airdrop at confirmed",
    });
    const listsKey = new TransactionInstruction({
      programId: ComputeBudgetProgram.programId,
      keys: [{ pubkey: key.publicKey, isSigner: false, isWritable: true }],
      data: ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }).data,
    });
    await submitTransaction(devnetConnection(b.pair.target.url, signal()), [listsKey], [funder], { chain: 'target', step: 'fund', signal: signal() });

    const seen = await here.chains.readAuthority(signal());
    expect(seen.target.transactions).toEqual([
      { signature: own[0], slot: expect.any(Number), signedHere: true },
      { signature: foreign[0], slot: expect.any(Number), signedHere: false },
    ]);
    expect(seen.source.transactions).toEqual([]);
    const fromElsewhere = await elsewhere.chains.readAuthority(signal());
    expect(fromElsewhere.target.transactions.map((t) => [t.signature, t.signedHere])).toEqual([
      [own[0], false],
      [foreign[0], true],
    ]);

    // Idle: nothing new, one getSignaturesForAddress per chain and no getTransaction.
    const before = {
      list: await requests(here.metrics, 'target', 'getSignaturesForAddress'),
      get: await requests(here.metrics, 'target', 'getTransaction'),
    };
    expect((await here.chains.readAuthority(signal())).target.transactions).toEqual([]);
    expect(await requests(here.metrics, 'target', 'getSignaturesForAddress')).toBe(before.list + 1);
    expect(await requests(here.metrics, 'target', 'getTransaction')).toBe(before.get);
  });

  it('plannedFees bounds what submitting the work costs: 5000 lamports per transaction and the cap on the compute ceiling, which landings lower', async () => {
    const b = await bridge({ capacity: 200 });
    await deposit(b, 40, b.world.tokenPairs.normal.sourceMint);
    const { chains } = chainsFor(b, b.authorities[0]!);
    const votes = ackDepositVotes(await chains.readState(signal(), READ_LIMITS));
    const fees = chains.plannedFees({ ackDeposits: votes, ackWithdraws: [], cleanups: [] });
    const balance = () => Number(b.pair.target.getAccount(b.authorities[0]!.publicKey)!.lamports);
    const start = balance();
    const { transactions } = await chains.ackDeposits(votes, signal());
    expect(transactions.length).toBeGreaterThan(1);
    // Nothing else bids on this chain: the bid is 0, the fee the base alone; the plan priced each
    // transaction the bytes pack at the cap of 100,000 on at most 1,400,000 CU.
    expect(start - balance()).toBe(transactions.length * 5000);
    expect(fees.source).toBe(0);
    expect(fees.target).toBeGreaterThan(start - balance());
    expect(fees.target).toBeLessThanOrEqual(transactions.length * (5000 + 140_000));
    // Landed transactions showed what an ack_deposit costs: the ceiling (2x the limit per vote)
    // now bounds the plan, far below the 200,000 CU per vote it assumed before anything landed.
    const again = chains.plannedFees({ ackDeposits: votes, ackWithdraws: [], cleanups: [] });
    expect(again.target).toBeLessThan(fees.target / 2);
    expect(again.target).toBeGreaterThan(transactions.length * 5000);
    const cleanupFees = chains.plannedFees({ ackDeposits: [], ackWithdraws: [], cleanups: Array.from({ length: 64 }, (_, i) => i) });
    expect(cleanupFees.target).toBe(0);
    expect(cleanupFees.source).toBeGreaterThanOrEqual(2 * 5000);
  });
});
