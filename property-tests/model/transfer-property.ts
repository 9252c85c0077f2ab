import fc from 'fast-check';
import { Registry } from 'prom-client';
import { createMetrics } from '../../src/metrics/metrics.js';
import { InvariantChecker } from '../invariants/checker.js';
import { drainToCompletion } from '../invariants/liveness.js';
import { noCoverage, type Coverage } from '../invariants/transaction-audit.js';
import { BridgeSystem, type BridgeConfig, type LyingFault } from '../system/bridge-system.js';
import type { Lie } from '../system/liars.js';
import { checkProperty, replaySettings, type PropertyProfile } from '../support/profile.js';
import { bridgeCommands } from './arbitraries.js';
import { initialModel } from './model.js';

/**
 * The model-based property: a random command sequence runs against a fresh real system, every
 * invariant is checked after every command, and the sequence ends with the liveness drain.
 */

/**
 * Runs and sequence lengths per profile (measured on the 2-core development VM next to the rest
 * of the suite: docs/testing.md). `timeoutMs` is the vitest timeout; shrinking stops a little
 * before it so that a failure is always reported. `budgetMs`: no sequence starts after it, so
 * that `npm test`'s file stays within 40 s whatever lengths the random sequences draw (runs of
 * 16 of them took 20 to 44 s in quiet suite runs); the summary line says how many ran.
 */
export const SEQUENCES: Record<PropertyProfile, { runs: number; maxCommands: number; timeoutMs: number; budgetMs?: number }> = {
  fast: { runs: 20, maxCommands: 24, timeoutMs: 240_000, budgetMs: 28_000 },
  long: { runs: 1_000, maxCommands: 60, timeoutMs: 6 * 3_600_000 },
};
const REPORT_MARGIN_MS = 20_000;

export interface PropertySummary {
  sequences: number;
  commands: number;
  /** Most liveness rounds any sequence needed. */
  maxRounds: number;
  /** Crank cycles that ended with last_error set (faults and rewinds did bite). */
  failedCycles: number;
  /** Most landed transactions a crank had not counted yet (the lag invariant 8 allows). */
  maxHealthLag: number;
  coverage: Coverage;
  /** What the faults of issue 31 did: restarts with sent, unlanded transactions; landings after their send's call; re-priced versions. */
  inFlight: { restartsWithUnlanded: number; lateLandings: number; repricedVersions: number };
  /** What the lying fallbacks of issue 39 did: commands that turned each lie on, answers the fetch-told lies rewrote. */
  lies: { on: Record<LyingFault, number>; answersRewritten: Record<Lie, number> };
}

/** The runs on Agave's banks (BridgeConfig.commitmentLags): fewer in the fast profile, beside the one-bank runs of the same model. */
export const SEQUENCES_ON_BANKS: Record<PropertyProfile, { runs: number; maxCommands: number; timeoutMs: number; budgetMs?: number }> = {
  fast: { runs: 8, maxCommands: 24, timeoutMs: 240_000, budgetMs: 15_000 },
  long: { runs: 300, maxCommands: 60, timeoutMs: 6 * 3_600_000 },
};

export async function checkTransferPhases(
  name: string,
  config: BridgeConfig,
  profile: PropertyProfile,
  sequences: (typeof SEQUENCES)[PropertyProfile] = SEQUENCES[profile],
): Promise<PropertySummary> {
  const { runs, maxCommands } = sequences;
  const replayPath = replaySettings().commandsReplayPath;
  const summary: PropertySummary = {
    sequences: 0,
    commands: 0,
    maxRounds: 0,
    failedCycles: 0,
    maxHealthLag: 0,
    coverage: noCoverage(),
    inFlight: { restartsWithUnlanded: 0, lateLandings: 0, repricedVersions: 0 },
    lies: {
      on: { oldState: 0, forgedHistory: 0, inflatedSlots: 0, forgedNonces: 0, replayedHistory: 0 },
      answersRewritten: { inflatedSlots: 0, forgedNonces: 0, replayedHistory: 0 },
    },
  };
  const commands = fc.commands([bridgeCommands(profile)], { maxCommands, size: 'max', ...(replayPath === undefined ? {} : { replayPath }) });
  const metrics = createMetrics(new Registry());
  // BRIDGE_PROPERTY_RUNS asks for that many sequences, whatever they take.
  const budgetMs = replaySettings().runs === undefined ? sequences.budgetMs : undefined;
  const began = performance.now();
  let failing = false;
  const property = fc.asyncProperty(commands, async (sequence) => {
    // Past the budget no new sequence starts: an interrupting precondition failure ends the
    // check as passed on the sequences that ran. Once one has failed, shrinking runs on
    // regardless, so that the counterexample is as small as ever.
    if (!failing && budgetMs !== undefined && performance.now() - began >= budgetMs) throw new fc.PreconditionFailure(true);
    const system = await BridgeSystem.start(config, metrics);
    try {
      const checker = new InvariantChecker(system);
      const run = { system, checker };
      await fc.asyncModelRun(() => ({ model: initialModel(system), real: run }), sequence);
      const commandsRun = system.trace.length;
      const rounds = await drainToCompletion(run);
      summary.sequences += 1;
      summary.commands += commandsRun;
      summary.maxRounds = Math.max(summary.maxRounds, rounds);
      summary.failedCycles += system.failedCycles;
      summary.maxHealthLag = Math.max(summary.maxHealthLag, checker.maxHealthLag);
      for (const key of Object.keys(summary.coverage) as Array<keyof Coverage>) summary.coverage[key] += checker.coverage[key];
      summary.inFlight.restartsWithUnlanded += system.restartsWithUnlanded;
      summary.inFlight.lateLandings += system.ledger.lateLandings;
      summary.inFlight.repricedVersions += system.ledger.repricedVersions;
      for (const [lie, count] of Object.entries(system.liesOn)) summary.lies.on[lie as LyingFault] += count;
      for (const [lie, count] of Object.entries(system.liars.told)) summary.lies.answersRewritten[lie as Lie] += count;
    } catch (error) {
      failing = true;
      throw error;
    } finally {
      await system.close();
    }
  });
  await checkProperty(name, property, runs, sequences.timeoutMs - REPORT_MARGIN_MS);
  return summary;
}
