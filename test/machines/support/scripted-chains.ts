import type {
  AckDepositVote,
  AckWithdrawVote,
  AuthorityView,
  BridgeChains,
  BridgeView,
  ChainAmounts,
  CleanupReport,
  PlannedWork,
  CheckOff,
  InFlightSettled,
  LifetimeMode,
  SigningLease,
  LandingSummary,
  SubmitReport,
} from '../../../src/chain/port/bridge-chains.js';
import type { ChainSide } from '../../../src/domain.js';
import { BridgeError } from '../../../src/errors.js';
import { AUTHORITY } from './bridge-view.js';

/**
 * An in-memory BridgeChains driven by a script. readState returns the test's current view;
 * each submission takes the next scripted reply of its method, or lands by default (one
 * transaction per 8 votes, like a batching client). Every call is recorded with its signal.
 * A held reply blocks until the test releases it, for tests of what happens mid-cycle.
 * readAuthority answers `authorityView` (new transactions are reported once, like the real
 * client) and is counted apart from `calls`; plannedFees prices each batch at 5000 lamports.
 */

export type ChainsMethod = 'readState' | 'ackDeposits' | 'ackWithdraws' | 'cleanupDeposits';

export interface ChainsCall {
  method: ChainsMethod;
  /** Votes or indices submitted (empty for readState). */
  indices: number[];
  votes: (AckDepositVote | AckWithdrawVote)[];
  signal: AbortSignal;
  /** Date.now() when the call was made (fake time in tests). */
  at: number;
}

type Reply = (call: ChainsCall) => Promise<unknown>;

export interface HeldReply {
  /** Resolves once the held call has started. */
  started: Promise<ChainsCall>;
  /** Let the call land (the default landing) or fail with `error`. */
  release(error?: unknown): void;
}

const VOTES_PER_TRANSACTION = 8;
const FEE_PER_TRANSACTION = 5_000;

export class ScriptedChains implements BridgeChains {
  readonly authority = AUTHORITY;
  readonly calls: ChainsCall[] = [];
  view: BridgeView;
  /** What the next readAuthority answers; its transactions are cleared once reported. */
  authorityView: AuthorityView = {
    source: { balance: 1_000_000_000, transactions: [] },
    target: { balance: 1_000_000_000, transactions: [] },
  };
  authorityReads = 0;
  /** The signing lease, when a test gives one (absent: the quiet window alone decides). */
  lease?: SigningLease;
  /** Runs after a submission landed, e.g. to advance the view as the chain would. */
  onLanded: ((call: ChainsCall) => void) | undefined;
  private readonly replies = new Map<ChainsMethod, Reply[]>();

  constructor(view: BridgeView) {
    this.view = view;
  }

  /** Queue replies for the next calls of `method`. */
  script(method: ChainsMethod, ...replies: Reply[]): this {
    this.replies.set(method, [...(this.replies.get(method) ?? []), ...replies]);
    return this;
  }

  callsOf(method: ChainsMethod): ChainsCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  readState(signal: AbortSignal): Promise<BridgeView> {
    return this.call({ method: 'readState', indices: [], votes: [], signal, at: Date.now() }, async () =>
      structuredClone(this.view),
    ) as Promise<BridgeView>;
  }

  ackDeposits(votes: readonly AckDepositVote[], signal: AbortSignal): Promise<SubmitReport> {
    return this.call(voteCall('ackDeposits', votes, signal), async (call) => this.land(call)) as Promise<SubmitReport>;
  }

  ackWithdraws(votes: readonly AckWithdrawVote[], signal: AbortSignal): Promise<SubmitReport> {
    return this.call(voteCall('ackWithdraws', votes, signal), async (call) => this.land(call)) as Promise<SubmitReport>;
  }

  cleanupDeposits(indices: readonly number[], signal: AbortSignal): Promise<CleanupReport> {
    const call: ChainsCall = { method: 'cleanupDeposits', indices: [...indices], votes: [], signal, at: Date.now() };
    return this.call(call, async () => ({ ...this.land(call), completed: [...indices], alreadyDone: [] })) as Promise<CleanupReport>;
  }

  async readAuthority(signal: AbortSignal): Promise<AuthorityView> {
    signal.throwIfAborted();
    this.authorityReads += 1;
    const view = structuredClone(this.authorityView);
    for (const chain of ['source', 'target'] as const) this.authorityView[chain].transactions = [];
    return view;
  }

  checksOff(): CheckOff[] {
    return [];
  }

  endpointProblems(): string[] {
    return [];
  }

  /** What lifetimeModes() answers: as if every chain's nonce pool were missing, unless a test says otherwise. */
  modes: Record<ChainSide, LifetimeMode> = { source: 'blockhash', target: 'blockhash' };

  lifetimeModes(): Record<ChainSide, LifetimeMode> {
    return { ...this.modes };
  }

  pendingTransactions(): number {
    return 0;
  }

  versionsInFlight(): Record<ChainSide, number> {
    return { source: 0, target: 0 };
  }

  async voidInFlight(): Promise<Record<ChainSide, InFlightSettled>> {
    const none: InFlightSettled = { voided: 0, landed: 0, unresolved: 0 };
    return { source: none, target: none };
  }

  landingSummaries(): Record<ChainSide, LandingSummary> {
    const none: LandingSummary = {
      transactions: 0,
      landed: 0,
      first_version_rate: null,
      slots_p50: null,
      slots_p90: null,
      versions_per_landed: null,
    };
    return { source: none, target: none };
  }

  plannedFees(work: PlannedWork): ChainAmounts {
    const fee = (indices: readonly number[]) => batches(indices).length * FEE_PER_TRANSACTION;
    const indices = (votes: readonly { index: number }[]) => votes.map((vote) => vote.index);
    return { target: fee(indices(work.ackDeposits)), source: fee(indices(work.ackWithdraws)) + fee(work.cleanups) };
  }

  private call(call: ChainsCall, byDefault: Reply): Promise<unknown> {
    this.calls.push(call);
    if (call.signal.aborted) return Promise.reject(call.signal.reason);
    const reply = this.replies.get(call.method)?.shift() ?? byDefault;
    return reply(call);
  }

  private land(call: ChainsCall): SubmitReport {
    const transactions = batches(call.indices).map((indices, n) => ({
      signature: `${call.method}-${this.calls.length}-${n}`,
      indices,
    }));
    this.onLanded?.(call);
    return { transactions };
  }

  /** A reply that lands like the default one. */
  readonly lands: Reply = async (call) =>
    call.method === 'cleanupDeposits' ? { ...this.land(call), completed: call.indices, alreadyDone: [] } : this.land(call);

  /** A reply that blocks until released; it rejects with the signal's reason on abort. */
  hold(): HeldReply & { reply: Reply } {
    let started!: (call: ChainsCall) => void;
    let release!: (error?: unknown) => void;
    const startedPromise = new Promise<ChainsCall>((resolve) => (started = resolve));
    const released = new Promise<unknown>((resolve) => (release = resolve));
    const reply: Reply = (call) => {
      started(call);
      return new Promise((resolve, reject) => {
        call.signal.addEventListener('abort', () => reject(call.signal.reason), { once: true });
        void released.then((error) => (error === undefined ? resolve(this.lands(call)) : reject(error)));
      });
    };
    return { started: startedPromise, release, reply };
  }
}

/** A reply that fails with `error`. */
export function fails(error: unknown): Reply {
  return () => Promise.reject(error);
}

export function retryableSubmitError(action = 'ack_deposit', landedSignatures: string[] = []): BridgeError<'CHAIN__FAILED_TO_SUBMIT'> {
  return new BridgeError(
    'CHAIN__FAILED_TO_SUBMIT',
    { chain: 'target', action, outcome: 'not_landed', landedSignatures },
    { tracker: 'T', reason: 'transaction expired before it landed' },
  );
}

export function programError(programErrorName: string, action = 'ack_deposit'): BridgeError<'CHAIN__FAILED_TO_SUBMIT'> {
  return new BridgeError(
    'CHAIN__FAILED_TO_SUBMIT',
    { chain: 'target', action, outcome: 'refused', programError: programErrorName, landedSignatures: [] },
    { tracker: 'T', reason: `the program rejected the transaction with ${programErrorName}` },
  );
}

/** A transient RPC failure (a timeout) or a permanent one (HTTP 401). */
export function rpcError(transient: boolean): BridgeError<'CHAIN__RPC_FAILED'> {
  return new BridgeError(
    'CHAIN__RPC_FAILED',
    { chain: 'source', method: 'getAccountInfo', ...(transient ? { kind: 'timeout' as const } : { kind: 'http' as const, status: 401 }) },
    { what: 'getAccountInfo on the source chain', reason: transient ? 'timeout' : 'HTTP 401' },
  );
}

function voteCall(method: ChainsMethod, votes: readonly (AckDepositVote | AckWithdrawVote)[], signal: AbortSignal): ChainsCall {
  return { method, indices: votes.map((vote) => vote.index), votes: [...votes], signal, at: Date.now() };
}

function batches(indices: readonly number[]): number[][] {
  const groups: number[][] = [];
  for (let start = 0; start < indices.length; start += VOTES_PER_TRANSACTION) {
    groups.push(indices.slice(start, start + VOTES_PER_TRANSACTION));
  }
  return groups;
}
