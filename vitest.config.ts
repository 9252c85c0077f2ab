import { configDefaults, defineConfig } from 'vitest/config';

// Fails on purpose: property-tests/support/replay.test.ts runs it in a child vitest, with
// BRIDGE_REPLAY_FIXTURE=1, to paste the replay commands it prints.
const REPLAY_FIXTURE = 'property-tests/support/replay-fixture.test.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'property-tests/**/*.test.ts'],
    exclude: process.env['BRIDGE_REPLAY_FIXTURE'] === '1' ? configDefaults.exclude : [...configDefaults.exclude, REPLAY_FIXTURE],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
