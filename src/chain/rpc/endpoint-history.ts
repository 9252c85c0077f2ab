import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { chainName, chainVariables, type ChainSide } from '../../domain.js';

/**
 * Which endpoints of a chain keep transaction history, as their answers to history reads show
 * (-32011: none); whether any does turns second-signer detection on or off
 * (bridge_rpc_history_available, one line per change).
 */

/** How long an endpoint that answered -32011 (no history) gets no history read before one asks it again. */
const HISTORY_RECHECK_MS = 10 * 60_000;

export interface EndpointHistoryOptions {
  chain: ChainSide;
  metrics: Metrics;
  logger?: Logger;
  endpoints: number;
  now: () => number;
}

export class EndpointHistory {
  /** When each endpoint last answered -32011; undefined while it is not known to lack history. */
  private readonly lackingSince: (number | undefined)[];
  private available: boolean | undefined;

  constructor(private readonly options: EndpointHistoryOptions) {
    this.lackingSince = Array.from({ length: options.endpoints }, () => undefined);
  }

  /** Whether a history read may try the endpoint: not known to lack history, or the lack is HISTORY_RECHECK_MS old (a node may be restarted with history). */
  mayHave(index: number): boolean {
    const since = this.lackingSince[index];
    return since === undefined || this.options.now() - since >= HISTORY_RECHECK_MS;
  }

  /** The endpoint answered a history read with -32011 (`false`), or with history (`true`). */
  observe(index: number, has: boolean): void {
    this.lackingSince[index] = has ? undefined : this.options.now();
    const available = this.lackingSince.some((since) => since === undefined);
    if (available === this.available) return;
    const first = this.available === undefined;
    this.available = available;
    const { chain, metrics, logger } = this.options;
    metrics.rpcHistoryAvailable.set({ chain }, available ? 1 : 0);
    if (!available) {
      logger?.warn(
        { chain, check: 'second_signer' },
        `no RPC endpoint of the ${chainName(chain)} chain keeps transaction history (JSON-RPC -32011): second-signer detection is off there, and dropped transactions are resolved from the status cache; add an endpoint with history to ${chainVariables(chain).fallbackUrls} to turn it on`,
      );
    } else if (!first) {
      logger?.info(
        { chain, check: 'second_signer' },
        `an RPC endpoint of the ${chainName(chain)} chain keeps transaction history again: second-signer detection is on`,
      );
    }
  }

  /** Whether some endpoint keeps transaction history: undefined until a history read said. */
  has(): boolean | undefined {
    return this.available;
  }
}
