import { BridgeError } from '../errors.js';
import { sleep } from '../time.js';

/**
 * GET /transfers* answers are paced: at most TRANSFER_ANSWERS_PER_SECOND in all, each at most
 * MAX_TRANSFER_PAGE_BYTES (./transfer-page-body.ts), so /transfers costs the process at most
 * that many answers' work and 100 x 256 KiB = 25 MiB/s of writes, however many clients ask.
 * Unpaced, 8 addresses x 32 connections asking again as soon as each answer ended got about 700
 * answers a second, and /health probes waited seconds behind them.
 *
 * Each request reserves the next free turn when it arrives (turns TRANSFER_TURN_MS apart) and
 * waits for it; waiting costs a timer, no work. A request whose turn is more than
 * TRANSFER_WAIT_MAX_MS away waits that long and is then refused with TRANSFER__RATE_EXCEEDED
 * (503 transfers_busy), so that a client asking again at once is slowed, not answered faster.
 * At most one request per open connection waits (HTTP/1.1), so at most MAX_CONNECTIONS.
 */

export const TRANSFER_ANSWERS_PER_SECOND = 100;
export const TRANSFER_WAIT_MAX_MS = 5_000;

export interface TransferPace {
  /** Resolves at this request's turn; rejects with TRANSFER__RATE_EXCEEDED after TRANSFER_WAIT_MAX_MS, or with the signal's reason. */
  turn(signal: AbortSignal): Promise<void>;
}

export function createTransferPace(now: () => number = () => performance.now()): TransferPace {
  return createPace({ perSecond: TRANSFER_ANSWERS_PER_SECOND, refuse: { waitMaxMs: TRANSFER_WAIT_MAX_MS, refusal: rateExceeded } }, now);
}

export interface PaceOptions {
  perSecond: number;
  /** A request whose turn is further than `waitMaxMs` away waits that long, then is refused; without it every request waits its turn. */
  refuse?: { waitMaxMs: number; refusal: () => Error };
}

/** Turns 1000 / perSecond ms apart, each reserved on arrival (GET /transfers*, GET /metrics). */
export function createPace({ perSecond, refuse }: PaceOptions, now: () => number = () => performance.now()): TransferPace {
  const turnMs = 1000 / perSecond;
  let nextTurnAt = -Infinity;
  return {
    async turn(signal) {
      const arrived = now();
      const at = Math.max(arrived, nextTurnAt);
      if (refuse !== undefined && at - arrived > refuse.waitMaxMs) {
        await sleep(refuse.waitMaxMs, signal);
        throw refuse.refusal();
      }
      nextTurnAt = at + turnMs;
      if (at > arrived) await sleep(at - arrived, signal);
    },
  };
}

function rateExceeded(): BridgeError<'TRANSFER__RATE_EXCEEDED'> {
  return new BridgeError('TRANSFER__RATE_EXCEEDED', { perSecond: TRANSFER_ANSWERS_PER_SECOND, waitMaxMs: TRANSFER_WAIT_MAX_MS });
}
