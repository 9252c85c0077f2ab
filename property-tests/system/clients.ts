import { Connection, PublicKey, type Keypair } from '@solana/web3.js';
import type { BridgeChains } from '../../src/chain/bridge-chains.js';
import { createBridgeChains } from '../../src/chain/client/index.js';
import { FileKeySigner } from '../../src/chain/client/native-signer.js';
import type { SubmitTiming } from '../../src/chain/client/transaction-sender.js';
import type { World } from '../../devnet/index.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import type { Metrics } from '../../src/metrics/metrics.js';

/**
 * The project's real chain client (createBridgeChains) for one authority key, tuned so that a
 * property run stays fast: confirmation is polled every few milliseconds and an unknown outcome
 * is given up on (left pending, resolved by the next call) after a fraction of a second.
 */

/** Per request. Far above the devnet's answer time, so only an injected latency makes a call time out. */
export const RPC_TIMEOUT_MS = 1_000;

const SUBMIT_TIMING: SubmitTiming = { pollIntervalMs: 3, rebroadcastIntervalMs: 15, confirmTimeoutMs: 300 };

export function authorityChains(world: World, authority: Keypair, metrics: Metrics, logger: Logger = silentLogger()): BridgeChains {
  const programId = new PublicKey(world.programId);
  return createBridgeChains(
    {
      sourceRpcUrl: world.source.rpcUrl,
      targetRpcUrl: world.target.rpcUrl,
      sourceChainId: world.source.chainId,
      targetChainId: world.target.chainId,
      sourceProgramId: programId,
      targetProgramId: programId,
      signer: new FileKeySigner(authority),
      rpcTimeoutMs: RPC_TIMEOUT_MS,
      sourceReadCommitment: 'finalized',
      priorityFee: { minMicroLamports: 0, maxMicroLamports: 100_000 },
      metrics,
      logger,
    },
    { submitTiming: SUBMIT_TIMING },
  );
}

/** What users and governance send through: an unmodified web3.js Connection, as their wallets would. */
export function userConnection(url: string): Connection {
  return new Connection(url, { commitment: 'confirmed', disableRetryOnRateLimit: true });
}

function silentLogger(): Logger {
  return createLogger({ level: 'silent' });
}
