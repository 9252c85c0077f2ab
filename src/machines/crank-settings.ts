import type { CrankConfig } from '../config/config.js';
import { MAX_PLANNED_PER_ACTION } from './planning/cycle-plan.js';

/**
 * Consecutive back-to-back cycles a backlog may trigger before the crank waits one poll
 * interval again; bounds how long one burst keeps the RPC endpoints busy (docs/crank.md).
 */
export const MAX_BACKLOG_CYCLES = 10;

/**
 * The settings the machine reads: its share of CrankConfig, taken whole from the configuration
 * (the field comments there say what each is), plus the bounds the crank fixes itself.
 */
export interface CrankSettings extends ConfiguredCrankSettings {
  /** Votes (or cleanups) per action per cycle. */
  batchLimit: number;
  /** Back-to-back cycles a backlog may trigger in a row. */
  maxBacklogCycles: number;
}

/** The machine's share of CrankConfig; a test's settings are a CrankConfig too (one value from configuration to machine). */
export type ConfiguredCrankSettings = Pick<
  CrankConfig,
  'pollIntervalMs' | 'maxAttempts' | 'retryBackoffMs' | 'onForeignSigner' | 'minBalanceLamports' | 'dryRun' | 'handoffMs'
>;

/** Picks the machine's fields (the context stays JSON: nothing else of the configuration rides along). */
export function crankSettings(configured: ConfiguredCrankSettings): CrankSettings {
  return {
    pollIntervalMs: configured.pollIntervalMs,
    maxAttempts: configured.maxAttempts,
    retryBackoffMs: configured.retryBackoffMs,
    batchLimit: MAX_PLANNED_PER_ACTION,
    maxBacklogCycles: MAX_BACKLOG_CYCLES,
    onForeignSigner: configured.onForeignSigner,
    minBalanceLamports: configured.minBalanceLamports,
    dryRun: configured.dryRun,
    handoffMs: configured.handoffMs,
  };
}
