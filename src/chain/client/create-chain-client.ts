import { PublicKey, type Commitment } from '@solana/web3.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { chainName, chainVariables, type ChainSide, type CrankAction } from '../../domain.js';
import type { AuthoritySigner } from '../../signer/authority-signer.js';
import type { BridgeChains, CheckOff, LandingSummary } from '../port/bridge-chains.js';
import { MAX_NONCE_ACCOUNTS, type SendExtensions } from '../chain-settings.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import type { RpcFetch } from '../rpc/rpc-fetch.js';
import { FeeEstimates } from '../rpc/fee-estimate.js';
import { SendPaths } from '../rpc/send-paths.js';
import { chainEndpoints, type ChainEndpointsOptions } from './chain-endpoints.js';
import { AuthorityHistory } from './read/authority-history.js';
import { SignedSignatures } from './read/signed-signatures.js';
import { ComputeCeilings } from './budget/compute-budget.js';
import { packedFees } from './submit/build/planned-fees.js';
import { leaseAddress } from '../lease-account.js';
import { createSigningLease } from './submit/lease.js';
import { Broadcast } from './submit/send/broadcast.js';
import { LandingRecord } from './submit/send/landing-record.js';
import { LoadedAccounts } from './budget/loaded-accounts.js';
import { MoveProofs } from './nonce/move-proofs.js';
import { NoncePool } from './nonce/nonce-pool.js';
import { PriorityFeeBidder, type PriorityFeeBounds } from './budget/priority-fee.js';
import { readAuthorityView } from './read-authority.js';
import { readBridgeView } from './read/read-state.js';
import { createBridgeWatch } from './read/bridge-watch.js';
import { poolAddressSet, RecentValues } from './read/signer-evidence.js';
import { zeroLandingCounters } from './submit/watch/signature-watch.js';
import { cleanupFor, submitCleanups } from './submit/submit-cleanups.js';
import { ackDepositFor, ackWithdrawFor, submitVotes } from './submit/submit-votes.js';
import type { BudgetedSubmitter } from './submit/send-batches.js';
import { TransactionSender, type SubmitTiming } from './submit/transaction-sender.js';

/**
 * The BridgeChains the crank drives, over two Solana JSON-RPC endpoints
 * (docs/chain-client.md). The authority signer stays inside this closure: it signs
 * transactions and is never logged, returned or put in an error.
 */

/** The endpoints' settings (./chain-endpoints.ts) and what signing and sending take besides. */
export interface BridgeChainsOptions extends ChainEndpointsOptions {
  /** The authority key (a file or a PKCS#11 token); never logged. */
  signer: AuthoritySigner;
  /** 'finalized' by default: the commitment of source deposit data that votes rely on. */
  sourceReadCommitment: Commitment;
  /** BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS and BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS. */
  priorityFee: PriorityFeeBounds;
  /** BRIDGE_NONCE_ACCOUNTS: the nonce pool's size per chain; 0 (the default here) keeps blockhash mode without reading any. */
  nonceAccounts?: number;
  /** BRIDGE_*_SEND_URLS and each chain's tip; none when absent. */
  sendExtensions?: Record<ChainSide, SendExtensions>;
  logger: Logger;
}

/** Knobs for tests: faster confirmation polling, an injected fetch. Production uses the defaults. */
export interface BridgeChainsTuning {
  submitTiming?: SubmitTiming;
  fetch?: RpcFetch;
}

function secondSignerOff({ chain }: ChainRpc): CheckOff {
  return {
    check: 'second_signer',
    chain,
    reason: `no RPC endpoint of the ${chainName(chain)} chain keeps transaction history; add one to ${chainVariables(chain).fallbackUrls}`,
  };
}

export function createBridgeChains(options: BridgeChainsOptions, tuning: BridgeChainsTuning = {}): BridgeChains {
  const { signer, metrics } = options;
  const logger = options.logger.child({ component: 'chain' });
  const authorityKey = signer.publicKey;

  const { fetch, submitTiming } = tuning;
  const { source, target } = chainEndpoints(options, fetch, logger);
  const recent = { source: new RecentValues(), target: new RecentValues() };
  const poolFor = (rpc: ChainRpc, chainId: number): NoncePool =>
    new NoncePool({
      rpc,
      authority: authorityKey,
      chainId,
      size: options.nonceAccounts ?? 0,
      recent: recent[rpc.chain],
      logger: logger.child({ chain: rpc.chain }),
      metrics,
    });
  const nonces = { source: poolFor(source.rpc, options.sourceChainId), target: poolFor(target.rpc, options.targetChainId) };
  const pathsFor = (chain: ChainSide): SendPaths => {
    const urls = options.sendExtensions?.[chain].sendUrls ?? [];
    return new SendPaths({
      chain,
      urls,
      timeoutMs: options.rpcTimeoutMs,
      metrics,
      logger: logger.child({ chain }),
      ...(fetch === undefined ? {} : { fetch }),
    });
  };
  const sendPaths = { source: pathsFor('source'), target: pathsFor('target') };
  const broadcastFor = (rpc: ChainRpc): Broadcast => new Broadcast(rpc, metrics, new LandingRecord(rpc.chain, metrics), sendPaths[rpc.chain]);
  const broadcast = { source: broadcastFor(source.rpc), target: broadcastFor(target.rpc) };
  const senderFor = (rpc: ChainRpc, signed: SignedSignatures, pool: NoncePool): TransactionSender =>
    new TransactionSender({
      rpc,
      signer,
      nonces: pool,
      metrics,
      logger: logger.child({ chain: rpc.chain }),
      signed,
      voidMicroLamportsPerUnit: options.priorityFee.maxMicroLamports,
      broadcast: broadcast[rpc.chain],
      ...(options.sendExtensions?.[rpc.chain].tip === undefined ? {} : { tip: options.sendExtensions[rpc.chain].tip }),
      ...(submitTiming === undefined ? {} : { timing: submitTiming }),
    });
  const leaseKey = leaseAddress(authorityKey, options.sourceChainId);
  const historyFor = (rpc: ChainRpc, signed: SignedSignatures, chainId: number): AuthorityHistory =>
    new AuthorityHistory({
      rpc,
      authority: authorityKey,
      signed,
      recent: recent[rpc.chain],
      poolAddresses: poolAddressSet(authorityKey, chainId, MAX_NONCE_ACCOUNTS),
      metrics,
      logger: logger.child({ chain: rpc.chain }),
      ...(rpc.chain === 'target' ? { lease: leaseKey } : {}),
    });
  const proofsFor = (rpc: ChainRpc): MoveProofs =>
    new MoveProofs({ rpc, authority: authorityKey, metrics, logger: logger.child({ chain: rpc.chain }) });
  for (const { rpc } of [source, target]) {
    zeroLandingCounters(rpc.chain, metrics);
    metrics.historyUnverified.inc({ chain: rpc.chain }, 0);
    metrics.signerEvidenceUnverified.inc({ chain: rpc.chain }, 0);
    metrics.nonceValueDisputes.inc({ chain: rpc.chain }, 0);
    metrics.computeUseIgnored.inc({ chain: rpc.chain }, 0);
    metrics.accountBytesRead.inc({ chain: rpc.chain }, 0);
  }
  const signed = { source: new SignedSignatures(), target: new SignedSignatures() };
  const sender = { source: senderFor(source.rpc, signed.source, nonces.source), target: senderFor(target.rpc, signed.target, nonces.target) };
  const history = {
    source: historyFor(source.rpc, signed.source, options.sourceChainId),
    target: historyFor(target.rpc, signed.target, options.targetChainId),
  };
  const proofs = { source: proofsFor(source.rpc), target: proofsFor(target.rpc) };
  const bidderFor = (rpc: ChainRpc): PriorityFeeBidder => {
    const chainLogger = logger.child({ chain: rpc.chain });
    const url = options.sendExtensions?.[rpc.chain].feeEstimateUrl;
    const estimates =
      url === undefined
        ? undefined
        : new FeeEstimates({
            chain: rpc.chain,
            url,
            timeoutMs: options.rpcTimeoutMs,
            metrics,
            logger: chainLogger,
            ...(fetch === undefined ? {} : { fetch }),
          });
    return new PriorityFeeBidder({
      rpc,
      bounds: options.priorityFee,
      metrics,
      landing: broadcast[rpc.chain].record,
      authority: authorityKey,
      logger: chainLogger,
      ...(estimates === undefined ? {} : { estimates }),
    });
  };
  const bidder = { source: bidderFor(source.rpc), target: bidderFor(target.rpc) };
  // The lease's transactions land as the votes do: the destination's market price and send-only paths.
  const lease = createSigningLease({
    rpc: target.rpc,
    signer,
    sourceChainId: options.sourceChainId,
    signed: signed.target,
    endpoints: 1 + (options.targetRpcFallbackUrls?.length ?? 0),
    bidder: bidder.target,
    broadcast: broadcast.target,
    metrics,
    logger: logger.child({ chain: 'target' }),
    ...(submitTiming === undefined ? {} : { pollIntervalMs: submitTiming.pollIntervalMs }),
  });
  const ceilingsFor = (chain: ChainSide): ComputeCeilings => new ComputeCeilings({ chain, logger: logger.child({ chain }), metrics });
  const ceilings = { source: ceilingsFor('source'), target: ceilingsFor('target') };
  const loadedFor = (rpc: ChainRpc, programId: PublicKey): LoadedAccounts =>
    new LoadedAccounts({ rpc, programId, logger: logger.child({ chain: rpc.chain }) });
  const loaded = { source: loadedFor(source.rpc, options.sourceProgramId), target: loadedFor(target.rpc, options.targetProgramId) };
  const common = { authority: authorityKey, metrics };
  /** What every send of `action` on the chain `side` needs. */
  const submitterOn = (side: ChainSide, action: CrankAction): BudgetedSubmitter & { metrics: Metrics } => {
    const { rpc, tracker } = side === 'source' ? source : target;
    return {
      ...common,
      rpc,
      sender: sender[side],
      bidder: bidder[side],
      ceilings: ceilings[side],
      loaded: loaded[side],
      target: { action, tracker },
    };
  };
  const submitters = {
    ackDeposits: submitterOn('target', 'ack_deposit'),
    ackWithdraws: submitterOn('source', 'ack_withdraw'),
    cleanupDeposits: submitterOn('source', 'cleanup_deposit'),
  };
  const cap = options.priorityFee.maxMicroLamports;
  const ackDeposit = ackDepositFor(target.tracker, authorityKey);
  const ackWithdraw = ackWithdrawFor(source.tracker, authorityKey);
  const cleanup = cleanupFor(source.tracker, authorityKey);

  const endpointCount = (fallbacks: readonly string[] | undefined) => 1 + (fallbacks?.length ?? 0);
  const watch = createBridgeWatch({
    source: { ...source, endpoints: endpointCount(options.sourceRpcFallbackUrls) },
    target: { ...target, endpoints: endpointCount(options.targetRpcFallbackUrls) },
  });

  return {
    authority: authorityKey.toBase58(),
    watch,

    // The nonce accounts come in one answer with each chain's confirmed tracker header: a cycle
    // signs in the mode its read found. The trackers' headers and the programs size what the
    // cycle's transactions load.
    // A new read is a new plan: what an earlier attempt left in flight in nonce mode is voided.
    readState: async (signal, limits) => {
      const [view] = await Promise.all([
        readBridgeView({ ...common, source, target, sourceReadCommitment: options.sourceReadCommitment, companions: nonces }, limits, signal),
        loaded.source.readPrograms(signal),
        loaded.target.readPrograms(signal),
      ]);
      await Promise.all([sender.source.voidPending(signal), sender.target.voidPending(signal)]);
      loaded.source.recordTracker(source.tracker.address, source.tracker.kind, view.deposits.header.capacity);
      loaded.target.recordTracker(target.tracker.address, target.tracker.kind, view.withdrawals.header.capacity);
      return view;
    },

    // The crank's three actions: votes on each chain's tracker, cleanups on the source's.
    ackDeposits: (votes, signal) => submitVotes({ ...submitters.ackDeposits, instructionFor: ackDeposit }, votes, signal),
    ackWithdraws: (votes, signal) => submitVotes({ ...submitters.ackWithdraws, instructionFor: ackWithdraw }, votes, signal),
    cleanupDeposits: (indices, signal) => submitCleanups({ ...submitters.cleanupDeposits, cleanupInstruction: cleanup }, indices, signal),

    readAuthority: (signal) =>
      readAuthorityView(
        {
          ...common,
          logger,
          source: { rpc: source.rpc, history: history.source, nonces: nonces.source, proofs: proofs.source, recent: recent.source },
          target: { rpc: target.rpc, history: history.target, nonces: nonces.target, proofs: proofs.target, recent: recent.target },
        },
        signal,
      ),

    // Cleanup depositors are not in the plan: a distinct placeholder each is the largest case.
    // Each action's limit is bounded by its compute ceiling, as when its transactions are signed.
    plannedFees: (work) => {
      const priced = (side: ChainSide, action: CrankAction) => ({
        capMicroLamports: cap,
        unitsPerInstruction: ceilings[side].perInstruction(action),
        tipLamports: options.sendExtensions?.[side].tip?.lamports ?? 0,
      });
      return {
        target: packedFees(
          work.ackDeposits.map((vote, i) => ackDeposit(vote, `ackDeposits[${i}]`)),
          authorityKey,
          priced('target', 'ack_deposit'),
          sender.target.leadFor('ack_deposit').leading,
        ),
        source:
          packedFees(
            work.ackWithdraws.map((vote, i) => ackWithdraw(vote, `ackWithdraws[${i}]`)),
            authorityKey,
            priced('source', 'ack_withdraw'),
            sender.source.leadFor('ack_withdraw').leading,
          ) +
          packedFees(
            work.cleanups.map((index) => cleanup(index, PublicKey.unique())),
            authorityKey,
            priced('source', 'cleanup_deposit'),
            sender.source.leadFor('cleanup_deposit').leading,
          ),
      };
    },

    checksOff: () => [source.rpc, target.rpc].filter((rpc) => rpc.hasHistory() === false).map(secondSignerOff),

    endpointProblems: () => [...source.rpc.configurationProblems(), ...target.rpc.configurationProblems()],

    lifetimeModes: () => ({ source: nonces.source.mode, target: nonces.target.mode }),

    pendingTransactions: () => sender.source.pendingCount + sender.target.pendingCount,

    lease,
    versionsInFlight: () => ({ source: sender.source.versionsInFlight(), target: sender.target.versionsInFlight() }),

    voidInFlight: async (signal) => {
      const settled = async (side: ChainSide) => {
        const voided = await sender[side].voidPending(signal);
        return { voided, ...(await sender[side].settleInFlight(signal)) };
      };
      const [sourceSettled, targetSettled] = await Promise.all([settled('source'), settled('target')]);
      return { source: sourceSettled, target: targetSettled };
    },
    landingSummaries: (): Record<ChainSide, LandingSummary> => ({
      source: broadcast.source.record.summary(),
      target: broadcast.target.record.summary(),
    }),
  };
}
