import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

// Fails on purpose: property-tests/support/replay.test.ts runs it in a child vitest, with
// BRIDGE_REPLAY_FIXTURE=1, to paste the replay commands it prints.
const REPLAY_FIXTURE = 'property-tests/support/replay-fixture.test.ts';

const ALL = ['test/**/*.test.ts', 'property-tests/**/*.test.ts'];
const EXCLUDED = process.env['BRIDGE_REPLAY_FIXTURE'] === '1' ? configDefaults.exclude : [...configDefaults.exclude, REPLAY_FIXTURE];

/**
 * Files that mostly wait (a devnet's slots, crank poll timers, real quiet windows) and assert
 * outcomes, not latencies (docs/testing.md, "How the suite is scheduled"): they run first,
 * side by side, WAITING_PER_CORE files per core. Every other file, a new one included, runs
 * after them in the compute group with vitest's own default, one core less than the machine
 * has: a file that times an answer (a /health bound, a probe, a deadline) keeps a core of its
 * own. `C + 1` at a time failed such bounds whenever the machine had other work.
 */
const WAITING = [
  'test/integration/handoff.test.ts',
  'test/integration/congestion.test.ts',
  'test/integration/faults.test.ts',
  'test/bench/soak.test.ts',
  'property-tests/*.test.ts',
];
const WAITING_PER_CORE = 1;
const CORES = availableParallelism();

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'waiting', include: WAITING, exclude: EXCLUDED, maxWorkers: WAITING_PER_CORE * CORES, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'compute', include: ALL, exclude: [...EXCLUDED, ...WAITING], maxWorkers: Math.max(1, CORES - 1), sequence: { groupOrder: 1 } },
      },
    ],
  },
});
