import type { Metrics } from '../../metrics/metrics.js';
import { HISTORY_NOT_AVAILABLE, MIN_CONTEXT_SLOT_NOT_REACHED } from '../../failure-policy.js';
import { isBridgeError } from '../../errors.js';
import { chainName, type ChainSide } from '../../domain.js';
import type { Endpoint } from './endpoint.js';
import type { EndpointPool } from './endpoint-pool.js';
import type { Bank } from './slot-view.js';
import { createReadRetry, readCallBudgetMs } from './read-retry.js';
import { isHistoryUnavailable, rpcFailure } from './rpc-failure.js';

/**
 * How one read of a chain reaches its endpoints (./endpoint-pool.ts): within readCallBudgetMs
 * (./read-retry.ts), each try on the next endpoint in the pool's order, carrying the pool's slot
 * floor for the bank the read is answered from (./slot-view.ts: a finalized read never carries a
 * slot only confirmed has reached) as minContextSlot and refusing an answer from a view the floor
 * rules out; a history read only on endpoints that may keep history. The methods themselves are
 * ./chain-rpc.ts's and ./history-reads.ts's.
 */

type Run<T> = (endpoint: Endpoint, floor: number | undefined) => Promise<T>;

export interface PoolReads<M extends string> {
  /**
   * One read within readCallBudgetMs: each try goes to the next endpoint in the pool's read order
   * (the best first); an endpoint's Retry-After is waited for when it fits in what is left of
   * the budget. `run` gets the floor the read carries as minContextSlot: the caller's, or the
   * pool's for `bank` when that is higher (./slot-view.ts), and hands the answer's context slot to `atSlot`.
   */
  read<T>(method: M, bank: Bank, signal: AbortSignal, run: Run<T>, asked?: number): Promise<T>;
  /**
   * A history read, within the same budget and tries as any read: each try goes to the best
   * endpoint not known to lack history and not yet tried by this read. An endpoint that answers
   * -32011 is marked and the next try moves on; with none left the read fails with -32011
   * (`isHistoryUnavailable`), without a request when none was left to begin with.
   */
  historyRead<T>(method: M, bank: Bank, signal: AbortSignal, run: Run<T>, asked?: number): Promise<T>;
  /** Runs `attempt` under the read retry policy; each attempt gets the read's deadline (its budget). */
  retried<T>(method: M, signal: AbortSignal, attempt: (deadline: number) => Promise<T>): Promise<T>;
  /** Tells the pool whether a read that carried its floor for `bank` was answered or refused it everywhere (the re-base after several). */
  carryingFloor<T>(floor: number | undefined, bank: Bank, answer: Promise<T>): Promise<T>;
  /** An answer's context slot from `bank`: refused (retryable) when beyond what the chain can have made or older than the read's floor. */
  atSlot(endpoint: Endpoint, method: M, bank: Bank, slot: number, floor: number | undefined): number;
}

export function createPoolReads<M extends string>(
  pool: EndpointPool,
  { chain, metrics, timeoutMs }: { chain: ChainSide; metrics: Metrics; timeoutMs: number },
): PoolReads<M> {
  const readRetry = createReadRetry();
  const budgetMs = readCallBudgetMs(timeoutMs);

  function read<T>(method: M, bank: Bank, signal: AbortSignal, run: Run<T>, asked?: number): Promise<T> {
    const order = pool.readOrder();
    const floor = higher(asked, pool.slotFloor(bank));
    let tries = 0;
    return carryingFloor(
      floor,
      bank,
      retried(method, signal, (deadline) => {
        const endpoint = order[tries++ % order.length]!;
        return pool.run(endpoint, method, deadline, signal, () => run(endpoint, floor));
      }),
    );
  }

  async function carryingFloor<T>(floor: number | undefined, bank: Bank, answer: Promise<T>): Promise<T> {
    const poolFloor = floor !== undefined && floor === pool.slotFloor(bank);
    try {
      const result = await answer;
      if (poolFloor) pool.floorAnswered(true, bank);
      return result;
    } catch (err) {
      if (poolFloor && isBridgeError(err, 'CHAIN__RPC_FAILED') && err.context.rpcCode === MIN_CONTEXT_SLOT_NOT_REACHED)
        pool.floorAnswered(false, bank);
      throw err;
    }
  }

  function atSlot(endpoint: Endpoint, method: M, bank: Bank, slot: number, floor: number | undefined): number {
    pool.admitContextSlot(endpoint, method, slot, floor, bank);
    return slot;
  }

  function historyRead<T>(method: M, bank: Bank, signal: AbortSignal, run: Run<T>, asked?: number): Promise<T> {
    const tried = new Set<Endpoint>();
    const floor = higher(asked, pool.slotFloor(bank));
    return carryingFloor(
      floor,
      bank,
      retried(method, signal, async (deadline) => {
        const order = pool.historyOrder();
        const endpoint = order.find((one) => !tried.has(one)) ?? order[0];
        if (endpoint === undefined) throw historyUnavailable(method);
        tried.add(endpoint);
        try {
          const result = await pool.run(endpoint, method, deadline, signal, () => run(endpoint, floor));
          pool.observeHistory(endpoint, true);
          return result;
        } catch (err) {
          if (!isHistoryUnavailable(err)) throw err;
          pool.observeHistory(endpoint, false);
          if (pool.historyOrder().length === 0) throw err;
          // Transient for this read (another endpoint has history), and thrown outside the breaker: not the endpoint's fault.
          throw rpcFailure(chain, method, {
            kind: 'unavailable',
            reason: `endpoint ${endpoint.label} keeps no transaction history; the next try goes to one that does`,
          });
        }
      }),
    );
  }

  async function retried<T>(method: M, signal: AbortSignal, attempt: (deadline: number) => Promise<T>): Promise<T> {
    signal.throwIfAborted();
    pool.probeSlots();
    const deadline = pool.time() + budgetMs;
    try {
      return await readRetry.execute(
        () => attempt(deadline),
        () => metrics.rpcRetries.inc({ chain, method }),
        signal,
      );
    } catch (err) {
      // An abort during a backoff wait surfaces as cockatiel's cancellation: report the caller's reason.
      if (signal.aborted) throw signal.reason;
      throw err;
    }
  }

  function historyUnavailable(method: string) {
    const reason = `no endpoint of the ${chainName(chain)} chain keeps transaction history (JSON-RPC ${HISTORY_NOT_AVAILABLE})`;
    return rpcFailure(chain, method, { kind: 'rpc', rpcCode: HISTORY_NOT_AVAILABLE, reason });
  }

  return { read, historyRead, retried, carryingFloor, atSlot };
}

/** The higher of two optional slots. */
function higher(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.max(a, b);
}

/** The floor a read carries, as the JSON-RPC `minContextSlot` config field (none without a floor). */
export function minContext(floor: number | undefined): { minContextSlot?: number } {
  return floor === undefined ? {} : { minContextSlot: floor };
}
