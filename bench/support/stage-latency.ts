import type { DepositEntry, TrackerHeader, WithdrawEntry } from '../../src/chain/types.js';
import { hasThresholdYes } from '../../devnet/program/votes.js';
import { DEFAULT_SUBMIT_TIMING } from '../../src/chain/client/submit/transaction-sender.js';
import type { CommitmentLags } from '../../devnet/bank/commitment-banks.js';
import { percentile, type Column, type Row } from '../report.js';
import type { BenchWorld } from './bench-world.js';
import { readTrackers } from './ledger.js';

/**
 * What users wait, per stage of a transfer, from the ledger (the soak and `npm run bench`): each
 * deposit is stamped when first seen on the source, then each stage when first seen done:
 * - ack_deposit: threshold yes votes on its destination entry (ack_deposit voted through);
 * - claimable: the destination entry Finalized, its result set (every earlier entry Finalized
 *   too: finalization is in order), so a Confirmed withdrawal can be claimed;
 * - ack_withdraw: the source entry Finalized (the result relayed back);
 * - cleanup: the source entry cleaned up.
 * Stamps are performance.now() at the sample that first saw them: late by at most one sampling
 * interval. A governance change that rewinds a transfer leaves its earlier stamps. Transfers
 * already on the source when the clock starts are not timed. Each sample reads only the unsettled
 * entries (from the lowest open one), so seeded history costs nothing.
 */

export const STAGES = ['ack_deposit', 'claimable', 'ack_withdraw', 'cleanup'] as const;
export type Stage = (typeof STAGES)[number];

/** Phases a transfer has gone through once a stage is done: the floor is that many × (poll interval + one confirmation). */
const STAGE_PHASES: Readonly<Record<Stage, number>> = { ack_deposit: 1, claimable: 1, ack_withdraw: 2, cleanup: 3 };

/** One confirmation: the chain client's status poll finds a devnet transaction that landed when sent. */
export const CONFIRMATION_MS = DEFAULT_SUBMIT_TIMING.pollIntervalMs;

/**
 * Waits for the source's finalized bank a stage includes on Agave's banks (the source is read
 * at finalized): the deposit's before any vote on it, and the source entry's Finalized status
 * before its cleanup is planned.
 */
const STAGE_FINALITY_WAITS: Readonly<Record<Stage, number>> = { ack_deposit: 1, claimable: 1, ack_withdraw: 1, cleanup: 2 };

/** The chain's commitment banks, for the floor: its slot time and how far confirmed and finalized trail the head. */
export interface StageBanks {
  slotMs: number;
  lags: CommitmentLags;
}

/** One confirmation on `banks`: status polls until the confirmed bank holds the landing (one poll on one bank). */
function confirmationMs(banks: StageBanks | undefined): number {
  const lagMs = banks === undefined ? 0 : banks.lags.confirmedLagSlots * banks.slotMs;
  return Math.max(1, Math.ceil(lagMs / CONFIRMATION_MS)) * CONFIRMATION_MS;
}

export const STAGE_COLUMNS: Column[] = [
  { key: 'run', header: 'run' },
  { key: 'stage', header: 'deposit → stage' },
  { key: 'transfers', header: 'transfers' },
  { key: 'p50', header: 'p50 (s)', digits: 2 },
  { key: 'p95', header: 'p95 (s)', digits: 2 },
  { key: 'p99', header: 'p99 (s)', digits: 2 },
  { key: 'max', header: 'max (s)', digits: 2 },
  { key: 'floor', header: 'floor (s)', digits: 2 },
];

export const STAGE_NOTES: readonly string[] = [
  'From the deposit landing (first seen on the source ledger) to: ack_deposit, threshold yes votes on the destination entry; claimable, the destination entry Finalized (finalization is in order, so it can wait for earlier entries), a Confirmed withdrawal claimable by its user; ack_withdraw, the source entry Finalized; cleanup, cleaned up. Seen on the ledger by a sampler, so late by at most its interval.',
  `floor: the phases the stage needs × (poll interval + one confirmation: the chain client's status polls, every ${CONFIRMATION_MS} ms, until the confirmed bank holds the landing), plus on Agave's banks the finalized lag once per wait for the source's finalized bank (the deposit before its votes; the Finalized entry before its cleanup, a second wait). A deposit waits from 0 to a whole poll interval for the next cycle of an authority (half on average, less when the second of three independent timers is what threshold 2 waits for), so p50 can sit below the floor; the user's claim of a Confirmed transfer is inside ack_withdraw and cleanup.`,
];

/** One row per stage: the latencies in seconds beside the floor of a setup polling every `pollIntervalMs` on `banks` (one bank when absent). */
export function stageRows(run: string, latencies: Record<Stage, StageLatency>, pollIntervalMs: number, banks?: StageBanks): Row[] {
  const finalityMs = banks === undefined ? 0 : banks.lags.finalizedLagSlots * banks.slotMs;
  const seconds = (ms: number) => ms / 1000;
  return STAGES.map((stage) => ({
    run,
    stage,
    transfers: latencies[stage].transfers,
    p50: seconds(latencies[stage].p50),
    p95: seconds(latencies[stage].p95),
    p99: seconds(latencies[stage].p99),
    max: seconds(latencies[stage].max),
    floor: seconds(STAGE_PHASES[stage] * (pollIntervalMs + confirmationMs(banks)) + STAGE_FINALITY_WAITS[stage] * finalityMs),
  }));
}

type Stamps = { deposit: number } & Partial<Record<Stage, number>>;

export interface StageLatency {
  transfers: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export class StageClock {
  readonly #ledger: Pick<BenchWorld, 'world' | 'pair'>;
  readonly #open = new Map<number, Stamps>();
  readonly #waited: Record<Stage, number[]> = { ack_deposit: [], claimable: [], ack_withdraw: [], cleanup: [] };
  #next: number;

  /** Times every transfer deposited from now on. */
  constructor(ledger: Pick<BenchWorld, 'world' | 'pair'>) {
    this.#ledger = ledger;
    this.#next = Number(readTrackers(ledger, Number.MAX_SAFE_INTEGER).deposits.header.entryCount);
  }

  sample(now = performance.now()): void {
    const from = Math.min(this.#next, ...this.#open.keys());
    const { deposits, withdrawals } = readTrackers(this.#ledger, from);
    const settled = Number(deposits.header.settledPrefix);
    for (let index = this.#next; index < from + deposits.entries.length; index++) this.#open.set(index, { deposit: now });
    this.#next = Math.max(this.#next, from + deposits.entries.length);
    for (const [index, stamps] of this.#open) {
      const deposit = deposits.entries[index - from];
      const withdraw = withdrawals.entries[index - from];
      this.#stamp(stamps, now, index < settled ? null : { deposit, withdraw, header: withdrawals.header });
      if (stamps.cleanup !== undefined) this.#close(index, stamps);
    }
  }

  latencies(): Record<Stage, StageLatency> {
    const of = (stage: Stage): StageLatency => {
      const values = this.#waited[stage];
      return {
        transfers: values.length,
        p50: percentile(values, 50),
        p95: percentile(values, 95),
        p99: percentile(values, 99),
        max: values.length === 0 ? Number.NaN : Math.max(...values),
      };
    };
    return { ack_deposit: of('ack_deposit'), claimable: of('claimable'), ack_withdraw: of('ack_withdraw'), cleanup: of('cleanup') };
  }

  /** `entries` null: below settled_prefix, every stage is done. */
  #stamp(
    stamps: Stamps,
    now: number,
    entries: { deposit: DepositEntry | undefined; withdraw: WithdrawEntry | undefined; header: TrackerHeader } | null,
  ): void {
    const done: Record<Stage, boolean> =
      entries === null
        ? { ack_deposit: true, claimable: true, ack_withdraw: true, cleanup: true }
        : {
            ack_deposit:
              entries.withdraw !== undefined &&
              (entries.withdraw.status === 'Finalized' || hasThresholdYes(entries.header, entries.withdraw.yesVotes)),
            claimable: entries.withdraw?.status === 'Finalized',
            ack_withdraw: entries.deposit?.status === 'Finalized',
            cleanup: entries.deposit?.cleanupCompleted === true,
          };
    // A later stage implies the earlier ones: a sample that missed one stamps it with the later one.
    for (const [i, stage] of STAGES.entries()) if (STAGES.slice(i).some((later) => done[later])) stamps[stage] ??= now;
  }

  #close(index: number, stamps: Stamps): void {
    for (const stage of STAGES) this.#waited[stage].push(stamps[stage]! - stamps.deposit);
    this.#open.delete(index);
  }
}
