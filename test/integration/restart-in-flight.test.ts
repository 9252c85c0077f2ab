import { beforeAll, describe, it } from 'vitest';
import { ensureBuilt } from '../support/server-process.js';
import { restartInFlight } from './support/restart-in-flight.js';

/**
 * Restart with a vote in flight (./support/restart-in-flight.ts): two real server processes one
 * after the other for authority 0, the first killed (SIGKILL) with its vote in flight. Here nothing
 * happens while it is down: the second life plans the first life's vote again (the same bytes).
 * restart-in-flight-deposit.test.ts: a deposit made while it was down.
 */

beforeAll(() => {
  ensureBuilt();
}, 120_000);

describe('a server restarted with a vote in flight', () => {
  it('kill -9 while its vote is in flight, restart: every transfer done, no transaction lands with an error, no vote carried twice', async ({
    onTestFinished,
  }) => {
    await restartInFlight(0, onTestFinished);
  }, 60_000);
});
