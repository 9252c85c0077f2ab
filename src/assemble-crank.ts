import type { AuthoritySigner } from './signer/authority-signer.js';
import type { BridgeChains } from './chain/port/bridge-chains.js';
import { chainBounds } from './chain/client/chain-bounds.js';
import { tokenRenewalReport } from './signer/token-renewal-report.js';
import { endpointsOptions } from './chain/client/chain-endpoints.js';
import { createBridgeChains, type BridgeChainsTuning } from './chain/client/create-chain-client.js';
import type { CrankConfig } from './config/config.js';
import type { Logger } from './log/logger.js';
import { type CrankService, startCrank } from './machines/crank-service.js';
import type { Metrics } from './metrics/metrics.js';
import { fileLedger, memoryLedger } from './machines/watchdog/breach-ledger.js';

/**
 * The one place a running crank is built from its configuration: the chain client for the
 * authority key, then the crank machine's actor over it. src/index.ts runs it on the parsed
 * environment; the integration tests, the benches and the property tests run it with a
 * CrankConfig of their own (fast confirmation timing through `tuning`, their own metrics
 * registry and logger, a given signer), so that what they test is what the server runs.
 */

export interface CrankParts {
  /** The settings as one value, from parseConfig (src/config/config.ts), read as they are. */
  config: CrankConfig;
  /** The authority key, opened from `config.authorityKeypair` (or a test's); never logged. */
  signer: AuthoritySigner;
  logger: Logger;
  metrics: Metrics;
  /** Tests and benches only: faster confirmation polling, an injected fetch. */
  tuning?: BridgeChainsTuning;
  /** Tests only: the watchdog's deployment read more often than DEPLOYMENT_CHECK_INTERVAL_MS. */
  deploymentIntervalMs?: number;
}

export function assembleCrank(parts: CrankParts): CrankService {
  const { config, signer, logger, metrics } = parts;
  if (signer.observe !== undefined) signer.observe(tokenRenewalReport(logger, metrics));
  const ledger = config.watchdog.watchdogFile === undefined ? memoryLedger() : fileLedger(config.watchdog.watchdogFile);
  return startCrank({
    settings: config,
    chains: assembleBridgeChains(parts),
    chainBounds: chainBounds(config),
    logger,
    metrics,
    signer: () => signer.describe(),
    watchdog: {
      config: config.watchdog,
      ledger,
      ...(parts.deploymentIntervalMs === undefined ? {} : { deploymentIntervalMs: parts.deploymentIntervalMs }),
    },
  });
}

/** The chain client alone, as the crank gets it (a bench measures its reads without a crank). */
export function assembleBridgeChains({ config, signer, logger, metrics, tuning }: CrankParts): BridgeChains {
  return createBridgeChains(
    {
      ...endpointsOptions(config, metrics),
      signer,
      sourceReadCommitment: config.sourceReadCommitment,
      priorityFee: config.priorityFee,
      nonceAccounts: config.nonceAccounts,
      sendExtensions: config.sendExtensions,
      logger,
    },
    tuning,
  );
}
