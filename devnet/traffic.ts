import { ComputeBudgetProgram, Keypair, PublicKey, type Connection, type TransactionInstruction } from '@solana/web3.js';
import { decodeTrackerHeader, decodeWithdrawEntries } from '../src/chain/codec/accounts.js';
import { depositInstruction, withdrawInstruction } from './instructions.js';
import { TRACKER_HEADER_SIZE, WITHDRAW_ENTRY_SIZE, entryOffset } from '../src/chain/codec/layout.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { mulberry32 } from './faults/faults.js';
import type { ChainPair } from './chain-pair.js';
import type { DevnetNode } from './node.js';
import { TOKEN_PAIR_KINDS, type TokenPairKind, type World } from './world/bootstrap.js';
import { awaitStatus, devnetConnection, submitTransaction } from './world/submit.js';

/**
 * Users for a demo or a soak run: a few funded depositors deposit across the token pairs at a
 * bounded rate (amounts up to 1,500, so the low-limit and low-vault pairs run dry), and claim
 * (`withdraw`) Confirmed + Pending withdrawals a short while after they finalize. Everything
 * goes through JSON-RPC transactions, so injected faults hit the traffic too. Under a price
 * floor (congestion), users bid exactly the floor: theirs are the transactions that clear it.
 */

export interface TrafficOptions {
  depositsPerSecond?: number;
  /** How long a claimable withdrawal waits before its user claims it. */
  claimDelayMs?: number;
  depositors?: number;
  seed?: number;
  /** Called with each failed step; the traffic goes on. */
  onError?: (err: unknown) => void;
}

export interface TrafficStats {
  deposits: number;
  claims: number;
  errors: number;
}

export interface Traffic {
  stats(): TrafficStats;
  /** No more deposits; claims go on, so that every transfer can finish (a soak's drain). */
  stopDeposits(): void;
  /** Stops and waits for the step in flight. */
  stop(): Promise<void>;
}

const MAX_AMOUNT = 1_500;
const MAX_CLAIMS_PER_TICK = 8;
// Most deposits use the normal pair; the others show every rejection reason and partial confirmation.
const KIND_WEIGHTS: Record<TokenPairKind, number> = { normal: 0.7, frozen: 0.1, lowLimit: 0.1, lowVault: 0.1 };

function bidding(node: DevnetNode, ix: TransactionInstruction): TransactionInstruction[] {
  const floor = node.bank.priceFloor;
  return floor === 0n ? [ix] : [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: floor }), ix];
}

export function startTraffic(pair: ChainPair, world: World, options: TrafficOptions = {}): Traffic {
  const depositsPerSecond = options.depositsPerSecond ?? 1;
  if (!(depositsPerSecond > 0 && depositsPerSecond <= 50)) throw new RangeError(`depositsPerSecond must be in (0, 50], got ${depositsPerSecond}`);
  const stopping = new AbortController();
  const random = mulberry32(options.seed ?? Date.now());
  const depositors = Array.from({ length: options.depositors ?? 3 }, () => Keypair.generate());
  const airdrops = { source: '', target: '' };
  for (const depositor of depositors) {
    airdrops.source = pair.source.airdrop(depositor.publicKey, 100_000_000_000);
    airdrops.target = pair.target.airdrop(depositor.publicKey, 100_000_000_000);
  }
  const source = devnetConnection(pair.source.url, stopping.signal);
  const target = devnetConnection(pair.target.url, stopping.signal);
  // The users' first transactions are preflighted on the confirmed bank: their airdrops must be there.
  const funded = async () => {
    await awaitStatus(source, airdrops.source, { chain: 'source', step: 'traffic airdrop', signal: stopping.signal });
    await awaitStatus(target, airdrops.target, { chain: 'target', step: 'traffic airdrop', signal: stopping.signal });
  };
  const stats: TrafficStats = { deposits: 0, claims: 0, errors: 0 };
  const claims = new ClaimQueue(options.claimDelayMs ?? 2_000);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

  async function depositOnce(): Promise<void> {
    const kind = weightedKind(random());
    const depositor = pick(depositors);
    const ix = depositInstruction({
      programId: pair.source.programId,
      depositor: depositor.publicKey,
      depositTracker: new PublicKey(world.source.depositTracker),
      amount: BigInt(1 + Math.floor(random() * MAX_AMOUNT)),
      recipient: Keypair.generate().publicKey.toBase58(),
      sourceMint: world.tokenPairs[kind].sourceMint,
    });
    await submitTransaction(source, bidding(pair.source, ix), [depositor], {
      chain: 'source',
      step: `traffic deposit (${kind})`,
      signal: stopping.signal,
    });
    stats.deposits += 1;
  }

  async function claimDue(): Promise<void> {
    for (const index of claims.due(await claimableIndices(target, world, claims.cursor)).slice(0, MAX_CLAIMS_PER_TICK)) {
      const claimer = pick(depositors);
      const ix = withdrawInstruction({
        programId: pair.target.programId,
        signer: claimer.publicKey,
        withdrawTracker: new PublicKey(world.target.withdrawTracker),
        tokenAccount: Keypair.generate().publicKey,
        index: BigInt(index),
      });
      await submitTransaction(target, bidding(pair.target, ix), [claimer], {
        chain: 'target',
        step: `traffic withdraw ${index}`,
        signal: stopping.signal,
      });
      stats.claims += 1;
    }
  }

  async function step(action: () => Promise<void>): Promise<void> {
    try {
      await action();
    } catch (err) {
      if (stopping.signal.aborted) return;
      stats.errors += 1;
      options.onError?.(err);
    }
  }

  let depositing = true;
  const running = (async () => {
    await step(funded);
    while (!stopping.signal.aborted) {
      if (depositing) await step(depositOnce);
      await step(claimDue);
      await sleep(1_000 / depositsPerSecond, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  })();

  return {
    stats: () => ({ ...stats }),
    stopDeposits: () => {
      depositing = false;
    },
    stop: async () => {
      stopping.abort(new Error('traffic stopped'));
      await running;
    },
  };
}

function weightedKind(draw: number): TokenPairKind {
  let threshold = 0;
  for (const kind of TOKEN_PAIR_KINDS) {
    threshold += KIND_WEIGHTS[kind];
    if (draw < threshold) return kind;
  }
  return 'normal';
}

interface Claimable {
  /** Entries below are settled for good (claimed or not claimable). */
  cursor: number;
  indices: number[];
}

/** Reads the WithdrawTracker window from `cursor` and lists the Confirmed + Pending entries. */
async function claimableIndices(target: Connection, world: World, cursor: number): Promise<Claimable> {
  const tracker = new PublicKey(world.target.withdrawTracker);
  const head = await target.getAccountInfo(tracker, { dataSlice: { offset: 0, length: TRACKER_HEADER_SIZE } });
  if (head === null) return { cursor, indices: [] };
  const header = decodeTrackerHeader(head.data, 'WithdrawTracker', world.target.withdrawTracker);
  const entryCount = Number(header.entryCount);
  const start = Math.min(cursor, entryCount);
  if (start === entryCount) return { cursor: start, indices: [] };
  const window = await target.getAccountInfo(tracker, {
    dataSlice: { offset: entryOffset('WithdrawTracker', start), length: (entryCount - start) * WITHDRAW_ENTRY_SIZE },
  });
  if (window === null) return { cursor: start, indices: [] };
  const entries = decodeWithdrawEntries(window.data, world.target.withdrawTracker, start);
  const indices: number[] = [];
  let settled = start;
  entries.forEach((entry, i) => {
    const claimable = entry.status === 'Finalized' && entry.result.kind === 'Confirmed' && entry.createdTokenAccount === 'Pending';
    if (claimable) indices.push(start + i);
    const done = entry.status === 'Finalized' && !claimable;
    if (done && settled === start + i) settled += 1;
  });
  return { cursor: settled, indices };
}

/** Remembers when each claimable entry was first seen, so its user claims it `delayMs` later. */
class ClaimQueue {
  cursor = 0;
  readonly #firstSeen = new Map<number, number>();
  readonly #delayMs: number;

  constructor(delayMs: number) {
    this.#delayMs = delayMs;
  }

  due(claimable: Claimable): number[] {
    this.cursor = claimable.cursor;
    const now = Date.now();
    const current = new Set(claimable.indices);
    for (const index of this.#firstSeen.keys()) if (!current.has(index)) this.#firstSeen.delete(index);
    for (const index of claimable.indices) if (!this.#firstSeen.has(index)) this.#firstSeen.set(index, now);
    return claimable.indices.filter((index) => now - this.#firstSeen.get(index)! >= this.#delayMs);
  }
}
