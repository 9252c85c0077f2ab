import { afterEach, describe, expect, it, vi } from 'vitest';
import { isBridgeError } from '../../src/errors.js';
import { createTransferPace, TRANSFER_ANSWERS_PER_SECOND, TRANSFER_WAIT_MAX_MS } from '../../src/http/transfer-pace.js';
import { rejection } from '../support/rejection.js';

// Issue 33, item 6: the work GET /transfers* costs the process is bounded in time, not only per request.

afterEach(() => {
  vi.useRealTimers();
});

const TURNS_WITHIN_WAIT = (TRANSFER_WAIT_MAX_MS / 1000) * TRANSFER_ANSWERS_PER_SECOND;

describe('createTransferPace', () => {
  it(`gives turns ${1000 / TRANSFER_ANSWERS_PER_SECOND} ms apart; a request with no turn within ${TRANSFER_WAIT_MAX_MS} ms waits that long, then is refused`, async () => {
    vi.useFakeTimers();
    const pace = createTransferPace(() => 0);
    const signal = new AbortController().signal;
    const answered: number[] = [];
    const turns = Array.from({ length: TURNS_WITHIN_WAIT + 1 }, (_, k) => pace.turn(signal).then(() => answered.push(k)));
    const refused = rejection(pace.turn(signal));

    await vi.advanceTimersByTimeAsync(0);
    expect(answered).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(answered).toHaveLength(TRANSFER_ANSWERS_PER_SECOND + 1);
    await vi.advanceTimersByTimeAsync(TRANSFER_WAIT_MAX_MS - 1_000);
    await Promise.all(turns);
    const err = await refused;
    expect(isBridgeError(err, 'TRANSFER__RATE_EXCEEDED')).toBe(true);
    expect((err as Error).message).toBe(
      `GET /transfers answers at most ${TRANSFER_ANSWERS_PER_SECOND} requests a second and every turn of the next ${TRANSFER_WAIT_MAX_MS / 1000} s is taken; retry shortly`,
    );
  });

  it('a client that leaves stops waiting at once', async () => {
    vi.useFakeTimers();
    const pace = createTransferPace(() => 0);
    await pace.turn(new AbortController().signal);
    const gone = new AbortController();
    const waiting = rejection(pace.turn(gone.signal));
    gone.abort(new Error('client gone'));
    expect(((await waiting) as Error).message).toBe('client gone');
  });
});
