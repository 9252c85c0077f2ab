import type { FastifyBaseLogger } from 'fastify';
import { isBridgeError, type BridgeError } from '../errors.js';

/**
 * GET /transfers while a chain's RPC fails: every request answers 503 `rpc_unavailable`, and
 * the log says so once per change, not once per request: a `warn` when a chain's reads start
 * failing or fail differently (another kind), an `info` when a read succeeds again.
 */

export interface RpcOutageLog {
  /** `read`'s result, its failure noted and rethrown. */
  watch<T>(read: Promise<T>, log: FastifyBaseLogger): Promise<T>;
}

export function createRpcOutageLog(): RpcOutageLog {
  // The failure kind of each chain seen failing since the last successful read: at most two entries.
  const failing = new Map<string, string>();
  const failed = (err: BridgeError<'CHAIN__RPC_FAILED'>, log: FastifyBaseLogger) => {
    const { chain, kind, method } = err.context;
    if (failing.get(chain) === kind) return;
    failing.set(chain, kind);
    log.warn(
      { chain, kind, method, reason: err.message },
      'GET /transfers: chain RPC unavailable; answering 503 rpc_unavailable until a read succeeds',
    );
  };
  const answered = (log: FastifyBaseLogger) => {
    if (failing.size === 0) return;
    failing.clear();
    log.info('GET /transfers: chain RPC answers again');
  };
  return {
    async watch(read, log) {
      try {
        const answer = await read;
        answered(log);
        return answer;
      } catch (err) {
        if (isBridgeError(err, 'CHAIN__RPC_FAILED')) failed(err, log);
        throw err;
      }
    },
  };
}
