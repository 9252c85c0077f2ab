import type { PriorityFeeBounds } from '../../../src/chain/client/budget/priority-fee.js';
import { Keypair, PublicKey, type Commitment } from '@solana/web3.js';
import { Registry } from 'prom-client';
import type { AckDepositVote, BridgeChains } from '../../../src/chain/port/bridge-chains.js';
import { createBridgeChains } from '../../../src/chain/client/create-chain-client.js';
import { FileKeySigner } from '../../../src/signer/file-key-signer.js';
import { key } from '../../support/deposit-entry.js';
import type { SubmitTiming } from '../../../src/chain/client/submit/transaction-sender.js';
import { DEFAULT_PROGRAM_ID } from '../../../src/chain/codec/layout.js';
import { depositTrackerAddress, withdrawTrackerAddress } from '../../../src/chain/pda.js';
import { nonceAddress } from '../../../src/chain/nonce-account.js';
import type { TrackerHeader, TrackerKind } from '../../../src/chain/types.js';
import { type BridgeError, isBridgeError } from '../../../src/errors.js';
import { MAX_PLANNED_PER_ACTION, readLimitsFor } from '../../../src/machines/planning/cycle-plan.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { captureLogs, type CapturedLogs } from '../../support/log-capture.js';
import type { RpcCall } from '../rpc/json-rpc-test-server.js';
import { FakeChain, type TrackerState } from './fake-chain.js';

/** Two FakeChains (source DepositTracker, destination WithdrawTracker) behind createBridgeChains. */

export const SOURCE_CHAIN_ID = 11;
export const TARGET_CHAIN_ID = 22;
const programId = new PublicKey(DEFAULT_PROGRAM_ID);
export const authority = Keypair.fromSeed(new Uint8Array(32).fill(21));
const otherAuthorities = [Keypair.fromSeed(new Uint8Array(32).fill(22)), Keypair.fromSeed(new Uint8Array(32).fill(23))];
export const depositTracker = depositTrackerAddress(programId, TARGET_CHAIN_ID);
export const withdrawTracker = withdrawTrackerAddress(programId, SOURCE_CHAIN_ID);

/** What the crank asks readState for: its batch limit plus one entry from each position. */
export const READ_LIMITS = readLimitsFor(MAX_PLANNED_PER_ACTION);

const FAST_TIMING: SubmitTiming = { pollIntervalMs: 10, rebroadcastIntervalMs: 40, confirmTimeoutMs: 3_000 };

export function trackerHeader(
  kind: TrackerKind,
  p: { entryCount: number; ownNext: number; settledPrefix?: number; capacity?: number; othersNext?: number },
): TrackerHeader {
  return {
    kind,
    sourceChainId: SOURCE_CHAIN_ID,
    targetChainId: TARGET_CHAIN_ID,
    threshold: 2,
    authorityCount: 3,
    entryCount: BigInt(p.entryCount),
    capacity: BigInt(p.capacity ?? 1_000),
    settledPrefix: BigInt(p.settledPrefix ?? 0),
    generation: 0n,
    governance: key(99),
    authorities: [otherAuthorities[0]!.publicKey.toBase58(), authority.publicKey.toBase58(), otherAuthorities[1]!.publicKey.toBase58()],
    votes: [
      { nextIndex: BigInt(p.othersNext ?? p.entryCount), lastVote: 'Yes' },
      { nextIndex: BigInt(p.ownNext), lastVote: 'Yes' },
      { nextIndex: BigInt(p.othersNext ?? p.entryCount), lastVote: 'Yes' },
    ],
  };
}

export interface BridgeFixture {
  source: FakeChain;
  target: FakeChain;
  chains: BridgeChains;
  /** Another client over the same nodes and key, with nothing in memory: the process after a restart. */
  restarted(): BridgeChains;
  metrics: Metrics;
  logs: CapturedLogs;
  close(): Promise<void>;
}

export async function startBridge(options: {
  source: TrackerState;
  target: TrackerState;
  sourceReadCommitment?: Commitment;
  timing?: SubmitTiming;
  rpcTimeoutMs?: number;
  priorityFee?: PriorityFeeBounds;
  /** Further destination endpoints (BRIDGE_TARGET_RPC_FALLBACK_URLS). */
  targetFallbackUrls?: string[];
  /** BRIDGE_NONCE_ACCOUNTS; each chain holds that many of the authority's nonce accounts unless `createNonces` is false. */
  nonceAccounts?: number;
  createNonces?: boolean;
  /** BRIDGE_TARGET_SEND_URLS: send-only paths of the destination chain. */
  targetSendUrls?: string[];
}): Promise<BridgeFixture> {
  const source = await new FakeChain(programId, depositTracker, options.source).start();
  const target = await new FakeChain(programId, withdrawTracker, options.target).start();
  for (const [chain, chainId] of [
    [source, SOURCE_CHAIN_ID],
    [target, TARGET_CHAIN_ID],
  ] as const) {
    if (options.createNonces === false) break;
    for (let position = 0; position < (options.nonceAccounts ?? 0); position++) {
      chain.nonces.set(nonceAddress(authority.publicKey, chainId, position).toBase58(), {
        authority: authority.publicKey,
        value: FakeChain.nonceValue(),
      });
    }
  }
  const metrics = createMetrics(new Registry());
  const logs = captureLogs('debug');
  const connect = () =>
    createBridgeChains(
      {
        sourceRpcUrl: source.url,
        targetRpcUrl: target.url,
        ...(options.targetFallbackUrls === undefined ? {} : { targetRpcFallbackUrls: options.targetFallbackUrls }),
        sourceChainId: SOURCE_CHAIN_ID,
        targetChainId: TARGET_CHAIN_ID,
        sourceProgramId: programId,
        targetProgramId: programId,
        signer: new FileKeySigner(authority),
        rpcTimeoutMs: options.rpcTimeoutMs ?? 2_000,
        sourceReadCommitment: options.sourceReadCommitment ?? 'finalized',
        priorityFee: options.priorityFee ?? { minMicroLamports: 0, maxMicroLamports: 100_000 },
        nonceAccounts: options.nonceAccounts ?? 0,
        ...(options.targetSendUrls === undefined
          ? {}
          : { sendExtensions: { source: { sendUrls: [], tip: undefined }, target: { sendUrls: options.targetSendUrls, tip: undefined } } }),
        metrics,
        logger: logs.logger,
      },
      { submitTiming: options.timing ?? FAST_TIMING },
    );
  return {
    source,
    target,
    chains: connect(),
    restarted: connect,
    metrics,
    logs,
    close: async () => {
      await Promise.all([source.close(), target.close()]);
    },
  };
}

export async function gaugeValue(metrics: Metrics, name: 'lastCycleAccountBytes' | 'authorityBalance', chain: string): Promise<number | undefined> {
  const { values } = await metrics[name].get();
  return values.find((v) => v.labels.chain === chain)?.value;
}

/** The CHAIN__FAILED_TO_SUBMIT an action rejects with (any other outcome fails the test). */
export async function submitFailure(promise: Promise<unknown>): Promise<BridgeError<'CHAIN__FAILED_TO_SUBMIT'>> {
  try {
    await promise;
  } catch (err) {
    if (isBridgeError(err, 'CHAIN__FAILED_TO_SUBMIT')) return err;
    throw err;
  }
  throw new Error('expected CHAIN__FAILED_TO_SUBMIT, the action succeeded');
}

export const signal = (): AbortSignal => new AbortController().signal;

/** The ack_deposit vote for entry `index` (approve; amount 1,000 + index). */
export const proposal = (index: number): AckDepositVote => ({
  index,
  approve: true,
  amount: String(1_000 + index),
  recipient: key(3),
  sourceMint: key(200),
});

/**
 * The node accepts the first transaction sent and no leader ever includes it; later ones land.
 * Returns that first signature once it has been sent.
 */
export function neverLandFirst(chain: FakeChain): () => string | undefined {
  let first: string | undefined;
  chain.onSend = (send) => {
    first ??= send.signature;
    return send.signature === first ? 'ignore' : 'none';
  };
  return () => first;
}

/** The final status search of an expired transaction: getSignatureStatuses with searchTransactionHistory. */
export const isHistorySearch = (call: RpcCall): boolean =>
  call.method === 'getSignatureStatuses' && JSON.stringify(call.params[1]) === '{"searchTransactionHistory":true}';
