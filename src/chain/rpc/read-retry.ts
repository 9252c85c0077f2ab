import { ExponentialBackoff, handleWhen, retry, type IBackoff, type IBackoffFactory, type IRetryBackoffContext } from 'cockatiel';
import { isBridgeError } from '../../errors.js';
import { isBehindSlotFloor, isEndpointMisconfigured, isTransientRpcFailure } from '../../failure-policy.js';

/**
 * Retries of idempotent reads (getAccountInfo, getBalance, getLatestBlockhash, getEpochInfo,
 * getSignatureStatuses) after a transient failure: HTTP 408/429/5xx, timeout, network error,
 * malformed body, and the "node behind" JSON-RPC codes (-32005, -32016). The decision is the
 * failure policy's (src/failure-policy.ts, `isTransientRpcFailure`). sendTransaction never goes
 * through here: the sender rebroadcasts the same signed bytes itself.
 *
 * Every read ends within `readCallBudgetMs(BRIDGE_RPC_TIMEOUT_MS)`: each attempt is bounded by
 * the transport's timeout, each wait by READ_BACKOFF_MAX_MS (Retry-After included).
 */

/** Attempts of one read, the first included. */
export const READ_ATTEMPTS = 3;
/**
 * Attempts of one read while every failure is the slot floor refused (-32016, the node has not
 * reached minContextSlot): a provider's load balancer over nodes at different heights answers
 * that at once from a lagging backend, and the next request may reach a current one (with half
 * its answers lagging, a read fails 1 in 256 times instead of 1 in 8). Each attempt still starts
 * only if it can end within the read's budget (readCallBudgetMs), which therefore stays the bound.
 */
export const FLOOR_REFUSAL_ATTEMPTS = 8;
/** The wait before a try that follows a floor refusal. */
const FLOOR_REFUSAL_BACKOFF_MS = 50;
/** First backoff before jitter; doubles per retry. */
const READ_BACKOFF_INITIAL_MS = 100;
/** Largest wait between two attempts, also the cap on a node's Retry-After. */
export const READ_BACKOFF_MAX_MS = 1_000;

/**
 * The longest one read can take, waits included:
 * READ_ATTEMPTS x rpcTimeoutMs + (READ_ATTEMPTS - 1) x READ_BACKOFF_MAX_MS.
 * With the default BRIDGE_RPC_TIMEOUT_MS = 10000: 3 x 10 s + 2 x 1 s = 32 s.
 */
export function readCallBudgetMs(rpcTimeoutMs: number): number {
  return READ_ATTEMPTS * rpcTimeoutMs + (READ_ATTEMPTS - 1) * READ_BACKOFF_MAX_MS;
}

/** True for a CHAIN__RPC_FAILED that another attempt (on the same endpoint or the next) may cure. */
export function isRetryableReadFailure(err: unknown): boolean {
  return isBridgeError(err, 'CHAIN__RPC_FAILED') && (isTransientRpcFailure(err.context) || isEndpointMisconfigured(err.context));
}

/** The wait a node asked for (Retry-After), in ms, when the failure carries one. */
function retryAfterOf(err: unknown): number | undefined {
  return isBridgeError(err, 'CHAIN__RPC_FAILED') ? err.context.retryAfterMs : undefined;
}

/**
 * Decorrelated-jitter exponential backoff whose wait is at least the node's Retry-After,
 * both capped at READ_BACKOFF_MAX_MS; FLOOR_REFUSAL_BACKOFF_MS after a floor refusal.
 */
export class RetryAfterBackoff implements IBackoffFactory<IRetryBackoffContext<unknown>> {
  constructor(private readonly jitter: IBackoffFactory<unknown> = defaultJitter()) {}

  next(context: IRetryBackoffContext<unknown>): IBackoff<IRetryBackoffContext<unknown>> {
    // A balancer routes the next request afresh: nothing is gained by waiting for a lagging backend.
    if ('error' in context.result && isBehindSlotFloor(context.result.error))
      return { duration: FLOOR_REFUSAL_BACKOFF_MS, next: (later) => this.next(later) };
    const jittered = this.jitter.next(context);
    const asked = 'error' in context.result ? (retryAfterOf(context.result.error) ?? 0) : 0;
    const duration = Math.min(READ_BACKOFF_MAX_MS, Math.max(jittered.duration, asked));
    const rest = new RetryAfterBackoff(jittered);
    return { duration, next: (later) => rest.next(later) };
  }
}

function defaultJitter(): IBackoffFactory<unknown> {
  return new ExponentialBackoff({ initialDelay: READ_BACKOFF_INITIAL_MS, maxDelay: READ_BACKOFF_MAX_MS });
}

export interface ReadRetry {
  /** Runs `attempt` up to READ_ATTEMPTS times (FLOOR_REFUSAL_ATTEMPTS while the floor is refused); `onRetry` is told before each retry is sent. */
  execute<T>(attempt: () => Promise<T>, onRetry: () => void, signal: AbortSignal): Promise<T>;
}

export function createReadRetry(backoff: IBackoffFactory<IRetryBackoffContext<unknown>> = new RetryAfterBackoff()): ReadRetry {
  return {
    execute: (attempt, onRetry, signal) => {
      // Other failures keep READ_ATTEMPTS; only floor refusals use the attempts beyond.
      let otherFailures = 0;
      const retryable = (err: Error) => isRetryableReadFailure(err) && (isBehindSlotFloor(err) || ++otherFailures < READ_ATTEMPTS);
      return retry(handleWhen(retryable), { maxAttempts: FLOOR_REFUSAL_ATTEMPTS - 1, backoff }).execute(({ attempt: retries }) => {
        if (retries > 0) onRetry();
        return attempt();
      }, signal);
    },
  };
}
