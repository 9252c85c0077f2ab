/**
 * The devnet's programmatic API for tests, benchmarks and scripts (docs/devnet.md): a chain pair,
 * a bootstrapped bridge world on it, fault injection, seeding and traffic.
 */
export { startChainPair, DEFAULT_SOURCE_CHAIN_ID, DEFAULT_TARGET_CHAIN_ID, type ChainPair, type ChainPairOptions } from './chain-pair.js';
export { startDevnetNode, DEFAULT_SLOT_INTERVAL_MS, type DevnetNode, type DevnetNodeOptions, type FeesPaid } from './node.js';
export { AGAVE_COMMITMENT_LAGS, type CommitmentLags, type CommitmentLevel } from './bank/commitment-banks.js';
export type { FaultDecision, FaultSnapshot } from './faults/faults.js';
export type { FaultSettings, MethodFaults } from './faults/settings.js';
export type { SeedOptions } from './seed.js';
export { startTraffic, type Traffic, type TrafficOptions, type TrafficStats } from './traffic.js';
export { summarizeTransfers, formatSummary, type TransferSummary } from './summary.js';
export {
  bootstrapWorld,
  worldFilePath,
  TOKEN_PAIR_KINDS,
  type TokenPairKind,
  type World,
  type WorldOptions,
} from './world/bootstrap.js';
export { devnetConnection, submitTransaction, type SubmitOptions } from './world/submit.js';
