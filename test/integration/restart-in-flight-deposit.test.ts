import { beforeAll, describe, it } from 'vitest';
import { ensureBuilt } from '../support/server-process.js';
import { restartInFlight } from './support/restart-in-flight.js';

/**
 * Restart with a vote in flight (./support/restart-in-flight.ts): two real server processes one
 * after the other for authority 0, the first killed (SIGKILL) with its vote in flight. Here a deposit
 * is made while it is down: the second life signs a larger vote against the same nonce value.
 * restart-in-flight.test.ts: nothing happens while it is down.
 */

beforeAll(() => {
  ensureBuilt();
}, 120_000);

describe('a server restarted with a vote in flight', () => {
  it('the same with a deposit made while it was down: the second life signs a larger vote against the same nonce value, and still one lands', async ({
    onTestFinished,
  }) => {
    await restartInFlight(1, onTestFinished);
  }, 60_000);
});
