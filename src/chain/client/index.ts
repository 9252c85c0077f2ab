import { PublicKey, type Commitment, type Keypair } from '@solana/web3.js';
import type { Logger } from '../../log/logger.js';
import type { ChainSide, Metrics } from '../../metrics/metrics.js';
import type { AckDepositVote, AckWithdrawVote, BridgeChains } from '../bridge-chains.js';
import { ackDepositInstruction, ackWithdrawInstruction, cleanupDepositInstruction } from '../codec/builders.js';
import { depositResultToArg } from '../codec/instructions.js';
import { depositTrackerAddress, tokenPairAddress, withdrawTrackerAddress } from '../pda.js';
import { depositResultFromWire, parseU64 } from '../result-wire.js';
import { createChainRpc, type ChainRpc } from '../rpc/chain-rpc.js';
import type { RpcFetch } from '../rpc/rpc-fetch.js';
import type { TrackerKind } from '../types.js';
import { AuthorityHistory, SignedSignatures } from './authority-history.js';
import { packedFees } from './fees.js';
import { readAuthorityView } from './read-authority.js';
import { readBridgeView } from './read-state.js';
import { submitCleanups } from './submit-cleanups.js';
import { entryIndexArg, submitVotes } from './submit-votes.js';
import type { TrackerRef } from './tracker-reader.js';
import { TransactionSender, type SubmitTiming } from './transaction-sender.js';

/**
 * The BridgeChains the crank drives, over two Solana JSON-RPC endpoints
 * (docs/chain-client.md). The authority keypair stays inside this closure: it signs
 * transactions and is never logged, returned or put in an error.
 */

export interface BridgeChainsOptions {
  sourceRpcUrl: string;
  targetRpcUrl: string;
  /** Further endpoints per chain (BRIDGE_*_RPC_FALLBACK_URLS); none when absent. */
  sourceRpcFallbackUrls?: readonly string[];
  targetRpcFallbackUrls?: readonly string[];
  /** BRIDGE_RPC_MAX_SLOT_LAG; the default 128 when absent. */
  rpcMaxSlotLag?: number;
  sourceChainId: number;
  targetChainId: number;
  sourceProgramId: PublicKey;
  targetProgramId: PublicKey;
  /** Never logged. */
  authority: Keypair;
  rpcTimeoutMs: number;
  /** 'finalized' by default: the commitment of source deposit data that votes rely on. */
  sourceReadCommitment: Commitment;
  metrics: Metrics;
  logger: Logger;
}

/** Knobs for tests: faster confirmation polling, an injected fetch. Production uses the defaults. */
export interface BridgeChainsTuning {
  submitTiming?: SubmitTiming;
  fetch?: RpcFetch;
}

export function createBridgeChains(options: BridgeChainsOptions, tuning: BridgeChainsTuning = {}): BridgeChains {
  const { authority, metrics, sourceChainId, targetChainId, sourceProgramId, targetProgramId } = options;
  const logger = options.logger.child({ component: 'chain' });
  const authorityKey = authority.publicKey;

  const { fetch, submitTiming } = tuning;
  const rpcFor = (chain: ChainSide, url: string, fallbackUrls: readonly string[] = []): ChainRpc =>
    createChainRpc({
      chain,
      url,
      fallbackUrls,
      timeoutMs: options.rpcTimeoutMs,
      metrics,
      ...(options.rpcMaxSlotLag === undefined ? {} : { maxSlotLag: options.rpcMaxSlotLag }),
      ...(fetch === undefined ? {} : { fetch }),
    });
  const senderFor = (rpc: ChainRpc, signed: SignedSignatures): TransactionSender =>
    new TransactionSender({
      rpc,
      authority,
      metrics,
      logger: logger.child({ chain: rpc.chain }),
      signed,
      ...(submitTiming === undefined ? {} : { timing: submitTiming }),
    });
  const historyFor = (rpc: ChainRpc, signed: SignedSignatures): AuthorityHistory =>
    new AuthorityHistory({ rpc, authority: authorityKey, signed, logger: logger.child({ chain: rpc.chain }) });
  const trackerRef = (chain: ChainSide, kind: TrackerKind, address: PublicKey, programId: PublicKey): TrackerRef => ({
    chain,
    kind,
    address,
    account: address.toBase58(),
    programId,
    sourceChainId,
    targetChainId,
  });

  const source = {
    rpc: rpcFor('source', options.sourceRpcUrl, options.sourceRpcFallbackUrls),
    tracker: trackerRef('source', 'DepositTracker', depositTrackerAddress(sourceProgramId, targetChainId), sourceProgramId),
  };
  const target = {
    rpc: rpcFor('target', options.targetRpcUrl, options.targetRpcFallbackUrls),
    tracker: trackerRef('target', 'WithdrawTracker', withdrawTrackerAddress(targetProgramId, sourceChainId), targetProgramId),
  };
  const signed = { source: new SignedSignatures(), target: new SignedSignatures() };
  const sourceSender = senderFor(source.rpc, signed.source);
  const targetSender = senderFor(target.rpc, signed.target);
  const history = { source: historyFor(source.rpc, signed.source), target: historyFor(target.rpc, signed.target) };
  const common = { authority: authorityKey, metrics };

  function ackDepositFor(vote: AckDepositVote, field: string) {
    const sourceMint = new PublicKey(vote.sourceMint);
    return ackDepositInstruction({
      programId: targetProgramId,
      authority: authorityKey,
      withdrawTracker: target.tracker.address,
      tokenPair: tokenPairAddress(targetProgramId, sourceChainId, sourceMint),
      index: entryIndexArg(vote.index, `${field}.index`),
      approve: vote.approve,
      amount: parseU64(vote.amount, `${field}.amount`),
      recipient: vote.recipient,
      sourceMint: vote.sourceMint,
    });
  }

  function ackWithdrawFor(vote: AckWithdrawVote, field: string) {
    return ackWithdrawInstruction({
      programId: sourceProgramId,
      authority: authorityKey,
      depositTracker: source.tracker.address,
      index: entryIndexArg(vote.index, `${field}.index`),
      approve: vote.approve,
      result: depositResultToArg(depositResultFromWire(vote.result, `${field}.result`)),
    });
  }

  function cleanupFor(index: number, depositor: PublicKey) {
    return cleanupDepositInstruction({
      programId: sourceProgramId,
      payer: authorityKey,
      depositTracker: source.tracker.address,
      depositor,
      index: BigInt(index),
    });
  }

  return {
    authority: authorityKey.toBase58(),

    readState: (signal) =>
      readBridgeView({ ...common, source, target, sourceReadCommitment: options.sourceReadCommitment }, signal),

    ackDeposits: (votes, signal) =>
      submitVotes(
        {
          ...common,
          rpc: target.rpc,
          sender: targetSender,
          target: { action: 'ack_deposit', tracker: target.tracker },
          instructionFor: ackDepositFor,
        },
        votes,
        signal,
      ),

    ackWithdraws: (votes, signal) =>
      submitVotes(
        {
          ...common,
          rpc: source.rpc,
          sender: sourceSender,
          target: { action: 'ack_withdraw', tracker: source.tracker },
          instructionFor: ackWithdrawFor,
        },
        votes,
        signal,
      ),

    cleanupDeposits: (indices, signal) =>
      submitCleanups(
        {
          ...common,
          rpc: source.rpc,
          sender: sourceSender,
          target: { action: 'cleanup_deposit', tracker: source.tracker },
          cleanupInstruction: cleanupFor,
        },
        indices,
        signal,
      ),

    readAuthority: (signal) =>
      readAuthorityView(
        {
          ...common,
          source: { rpc: source.rpc, history: history.source },
          target: { rpc: target.rpc, history: history.target },
        },
        signal,
      ),

    // Cleanup depositors are not in the plan: a distinct placeholder each is the largest case.
    plannedFees: (work) => ({
      target: packedFees(work.ackDeposits.map((vote, i) => ackDepositFor(vote, `ackDeposits[${i}]`)), authorityKey),
      source:
        packedFees(work.ackWithdraws.map((vote, i) => ackWithdrawFor(vote, `ackWithdraws[${i}]`)), authorityKey) +
        packedFees(work.cleanups.map((index) => cleanupFor(index, PublicKey.unique())), authorityKey),
    }),
  };
}
