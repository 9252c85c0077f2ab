import { ExponentialBackoff, handleWhen, retry, type IBackoff, type IBackoffFactory, type IRetryBackoffContext } from 'cockatiel';
import { isBridgeError } from '../../errors.js';
import { isEndpointMisconfigured, isTransientRpcFailure } from '../../failure-policy.js';

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
 * both capped at READ_BACKOFF_MAX_MS.
 */
export class RetryAfterBackoff implements IBackoffFactory<IRetryBackoffContext<unknown>> {
  constructor(private readonly jitter: IBackoffFactory<unknown> = defaultJitter()) {}

  next(context: IRetryBackoffContext<unknown>): IBackoff<IRetryBackoffContext<unknown>> {
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
  /** Runs `attempt` up to READ_ATTEMPTS times; `onRetry` is told before each retry is sent. */
  execute<T>(attempt: () => Promise<T>, onRetry: () => void, signal: AbortSignal): Promise<T>;
}

export function createReadRetry(backoff: IBackoffFactory<IRetryBackoffContext<unknown>> = new RetryAfterBackoff()): ReadRetry {
  const policy = retry(handleWhen(isRetryableReadFailure), { maxAttempts: READ_ATTEMPTS - 1, backoff });
  return {
    execute: (attempt, onRetry, signal) =>
      policy.execute(({ attempt: retries }) => {
        if (retries > 0) onRetry();
        return attempt();
      }, signal),
  };
}
