import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Fails on purpose: property-tests/support/replay.test.ts runs it in a child vitest, with
// BRIDGE_REPLAY_FIXTURE=1, to paste the replay commands it prints.
const REPLAY_FIXTURE = 'property-tests/support/replay-fixture.test.ts';

const ALL = ['test/**/*.test.ts', 'property-tests/**/*.test.ts'];
const EXCLUDED = process.env['BRIDGE_REPLAY_FIXTURE'] === '1' ? configDefaults.exclude : [...configDefaults.exclude, REPLAY_FIXTURE];

/**
 * How the suite is scheduled (docs/testing.md, "How the suite is scheduled"). Most files wait
 * (a devnet's slots, crank timers, quiet windows, header timeouts) far more than they compute,
 * so they run WIDE_PER_CORE files per core: a waiting file needs no core of its own. The files
 * that time an answer against a bound with less than about a second to spare run afterwards,
 * on their own, one per core, so that no neighbour's CPU is counted against their bound.
 */
const WIDE_PER_CORE = 2;
const CORES = availableParallelism();

/**
 * The longest files (over 10 s alone), longest first. They start ahead of every other file of
 * their group (LongFirst, below): the group then lasts about its CPU over the cores, or its
 * longest file, whichever is more; started last, a long file would add its own time to that.
 */
const LONG = [
  // Issue 47's acceptance at production timing (400 ms slots, finality 12.8 s): about 115 s, mostly waiting.
  'test/integration/agave-banks.test.ts',
  // Issue 48's idle bridge (90 s at a 2 s poll) and the lease's proofs against lying endpoints.
  'test/integration/lease-idle.test.ts',
  'test/integration/lease-proof.test.ts',
  'test/integration/handoff-rollout.test.ts',
  'test/integration/handoff-takeover.test.ts',
  'property-tests/five-authorities.test.ts',
  'test/bench/soak.test.ts',
  'test/integration/congestion.test.ts',
  'property-tests/three-authorities.test.ts',
  'test/integration/faults.test.ts',
  'test/integration/restart-in-flight.test.ts',
  'test/ops/nonce-init.test.ts',
  'test/integration/real-nodes.test.ts',
  'test/integration/nonce-landing.test.ts',
  'test/http/connection-exhaustion.test.ts',
  'test/ops/cli.test.ts',
  'test/install/runtime-install.test.ts',
  'test/integration/transfers-load.test.ts',
  'test/integration/key-services.test.ts',
  'test/integration/key-service-errors.test.ts',
  'test/integration/hsm.test.ts',
  'test/integration/send-outage-health.test.ts',
];

/** Vitest's order (failed first, then by the durations it cached, else by size), with each group's LONG files first, in LONG's order. */
class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification): number => {
      const index = LONG.indexOf(relative(spec.project.config.root, spec.moduleId));
      return index === -1 ? LONG.length : index;
    };
    const order = (spec: TestSpecification): number => spec.project.config.sequence.groupOrder;
    return (await super.sort(files)).sort((a, b) => order(a) - order(b) || rank(a) - rank(b));
  }
}

/**
 * Files that bound a wall time with under about a second to spare (a /health answer within
 * 100 ms, an abort honoured within 500 ms, a signer's 300 to 400 ms deadline, a shutdown
 * deadline, a 300 ms RPC timeout the live endpoint must beat, one timing against another
 * measured moments apart): on a core of their own each,
 * after the wide group. A new file with such a bound joins this list.
 */
const TIMED = [
  'test/integration/hostile-chain.test.ts',
  'test/integration/hostile-node.test.ts',
  'test/integration/shutdown.test.ts',
  'test/integration/endpoints.test.ts',
  'test/devnet/faults/faults.test.ts',
  'test/devnet/seed.test.ts',
  'test/chain/client/read/read-state.test.ts',
  'test/chain/client/submit/submit-votes.test.ts',
  'test/signer/pkcs11/pkcs11-hardening.test.ts',
  'test/signer/remote/key-services.test.ts',
  'test/chain/rpc/endpoint-pool.test.ts',
  'test/chain/rpc/rpc-fetch.test.ts',
  'test/chain/rpc/read-retry.test.ts',
  'test/lifecycle/process.test.ts',
];

// A renamed or removed file would otherwise leave its entry matching nothing, and the file
// itself scheduled as a short one.
for (const path of [...LONG, ...TIMED]) {
  if (!existsSync(new URL(path, import.meta.url))) throw new Error(`vitest.config.ts schedules ${path} (LONG or TIMED), which does not exist: update the list`);
}

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 30_000,
    // Fails a test whose servers wrote a log line with a key twice (test/support/log-lines.ts).
    setupFiles: ['test/support/log-lines-setup.ts'],
    hookTimeout: 30_000,
    pool: 'forks',
    sequence: { sequencer: LongFirst },
    projects: [
      // One group (the same groupOrder and width), LONG's files first (LongFirst).
      // `long` and `short` reuse each worker's module graph from file to file (isolate: false):
      // most files' CPU went to importing web3.js, fastify and xstate again for each file (18 s
      // of CPU isolated against 7.5 s shared for 29 such files). A file here restores what it
      // changes (timers, the environment, globals); one that cannot joins `timed`, which
      // isolates (pkcs11-hardening.test.ts, sharing a worker with other files, found no token in
      // its SoftHSM store: a cause not pinned down, so it keeps a process of its own).
      {
        extends: true,
        test: { name: 'long', isolate: false, include: LONG, exclude: EXCLUDED, maxWorkers: WIDE_PER_CORE * CORES, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'short', isolate: false, include: ALL, exclude: [...EXCLUDED, ...LONG, ...TIMED], maxWorkers: WIDE_PER_CORE * CORES, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'timed', include: TIMED, exclude: EXCLUDED, maxWorkers: CORES, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
