import type { CrankAction } from './domain.js';
import { isBridgeError, type BridgeErrorContexts, type SignerFailure } from './errors.js';

/**
 * The one failure policy: whether a failure is tried again. The chain layer reports facts in
 * its errors (what happened, on which chain, endpoint and entry: an HTTP status, a JSON-RPC
 * code, a transaction's outcome, a program error); every decision to try again is made here
 * from those facts, at the three levels where the server tries again:
 *
 * - a read within one RPC call (src/chain/rpc/read-retry.ts): `isTransientRpcFailure`; a
 *   send is never re-asked, its bytes are rebroadcast while `isDefiniteSendRefusal` is false;
 * - the rest of a batch within one attempt (src/chain/client/submit/send-batches.ts):
 *   `resendAfterRefusal`;
 * - an action within a cycle (`retriesAction`, recorded with the failed attempt; the machine's
 *   `isRetryableFailure` guard reads it, up to BRIDGE_CRANK_MAX_ATTEMPTS attempts); what a
 *   failed attempt landed all the same is counted (`landedSignaturesOf`).
 *
 * docs/failure-policy.md is the table an operator reads; a test checks it row by row.
 */

type RpcFacts = Pick<BridgeErrorContexts['CHAIN__RPC_FAILED'], 'kind' | 'status' | 'rpcCode'>;
type SubmitFacts = BridgeErrorContexts['CHAIN__FAILED_TO_SUBMIT'];

/** JSON-RPC -32016: the node has not reached the minContextSlot asked (a node state that passes). */
export const MIN_CONTEXT_SLOT_NOT_REACHED = -32016;

/** JSON-RPC -32011: the node keeps no transaction history (a capability of that node, not a fault). */
export const HISTORY_NOT_AVAILABLE = -32011;

// JSON-RPC codes that say the request itself is wrong or asks for something this node will
// never have: asking again cannot help. Every other code (-32603 internal, -32004 block not
// available, -32005 node unhealthy or behind, -32014, -32016 minContextSlot not reached, ...)
// describes a node state that passes.
const PERMANENT_RPC_CODES: ReadonlySet<number> = new Set([
  -32700, // parse error
  -32600, // invalid request
  -32601, // method not found
  -32602, // invalid params
  -32001, // block cleaned up
  -32002, // transaction simulation failed (preflight): decided by the transaction error
  -32003, // transaction signature verification failure
  -32006, // transaction precompile verification failure
  -32010, // key excluded from secondary index
  HISTORY_NOT_AVAILABLE, // transaction history not available: history reads move to an endpoint that has it
  -32013, // transaction signature length mismatch
  -32015, // unsupported transaction version
]);

// JSON-RPC answers to sendTransaction that prove the node did not forward the transaction:
// it refused before sending (preflight, signature or version checks, an unhealthy node, a bad
// request). Any other failure (timeout, lost connection, HTTP 5xx, -32603) leaves the outcome
// unknown: the transaction may have reached a leader, so the sender keeps watching it.
const SEND_REFUSAL_CODES: ReadonlySet<number> = new Set([-32700, -32600, -32601, -32602, -32002, -32003, -32005, -32006, -32013, -32015]);

/** True when a failed sendTransaction certainly did not broadcast the transaction: the attempt ends at once. */
export function isDefiniteSendRefusal(err: unknown): boolean {
  if (!isBridgeError(err, 'CHAIN__RPC_FAILED')) return false;
  const code = err.context.rpcCode;
  return code !== undefined && SEND_REFUSAL_CODES.has(code);
}

/** HTTP statuses after which the same request may succeed: overload, rate limit, gateway trouble. */
function isTransientHttpStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

// An endpoint that answers these to everything is unusable (a revoked key, a blocked address, a
// wrong path), while another endpoint of the chain may be fine: the pool takes it out for a
// while and the call moves on (src/chain/rpc/endpoint-pool.ts).
const ENDPOINT_REFUSAL_STATUSES: ReadonlySet<number> = new Set([401, 403, 404]);

/** Whether the failure says this endpoint refuses us, rather than the request being wrong. */
export function isEndpointRefusal(facts: RpcFacts): boolean {
  return facts.kind === 'http' && facts.status !== undefined && ENDPOINT_REFUSAL_STATUSES.has(facts.status);
}

/**
 * A failure one endpoint's configuration causes: a TLS handshake that fails (an https:// URL to
 * a plain-HTTP node, a certificate that does not verify). Never transient, so no action is
 * tried again for it; but a read moves on to the chain's next endpoint, and that endpoint's
 * breaker counts it, as for a refusal.
 */
export function isEndpointMisconfigured(facts: RpcFacts): boolean {
  return facts.kind === 'tls';
}

/** Whether the same RPC request may succeed if asked again (of this endpoint or another). */
export function isTransientRpcFailure(facts: RpcFacts): boolean {
  switch (facts.kind) {
    case 'http':
      return facts.status !== undefined && (isTransientHttpStatus(facts.status) || isEndpointRefusal(facts));
    case 'rpc':
      return facts.rpcCode !== undefined && !PERMANENT_RPC_CODES.has(facts.rpcCode);
    case 'invalid_result':
    case 'tls':
      return false;
    case 'timeout':
    case 'network':
    case 'malformed':
    case 'too_large':
    case 'unavailable':
    case 'unexpected':
      return true;
  }
}

// Runtime transaction errors after which the same instructions may succeed in a new transaction.
const TRANSIENT_TRANSACTION_ERRORS: ReadonlySet<string> = new Set([
  'BlockhashNotFound',
  'AccountInUse',
  'ClusterMaintenance',
  'WouldExceedMaxBlockCostLimit',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  // The program costs more than the simulation measured (an upgrade rolling out): a new attempt
  // measures again and cuts the batch to what fits (src/chain/client/budget/compute-budget.ts).
  'ComputationalBudgetExceeded',
]);

/**
 * Program errors that only mean "the view this attempt was planned from is out of date": a
 * threshold no rewound positions, another authority proposed first, our own earlier batch
 * landed, a governance change rewound everyone. The retry re-reads both trackers and plans
 * again, which resolves them.
 */
const STALE_VIEW_PROGRAM_ERRORS: ReadonlySet<string> = new Set([
  'VoteOutOfOrder',
  'VoteMismatch',
  'InvalidVote',
  'EntryNotFound',
  'EntryNotFinalized',
]);

/**
 * Every node tried was behind the slot floor the read carried (-32016, or an answer the pool
 * found older than it): a lagging node or load-balancer backend, nothing an operator must fix
 * (docs/chain-client.md, "What a node can claim"). Neither counts against the endpoint nor logs
 * an error line.
 */
export function isBehindSlotFloor(error: unknown): boolean {
  return isBridgeError(error, 'CHAIN__RPC_FAILED') && error.context.rpcCode === MIN_CONTEXT_SLOT_NOT_REACHED;
}

/**
 * Whether another attempt of a crank action (a fresh read, a fresh plan, a new transaction) can
 * succeed where this one failed. Configuration and contract errors (not an authority, a missing
 * or malformed tracker, wrong accounts) fail the action at once: no attempt can fix them.
 * Anything that is not a BridgeError is unexpected, and tried again within the attempt limit.
 */
export function retriesAction(error: unknown): boolean {
  if (isBridgeError(error, 'CHAIN__FAILED_TO_SUBMIT')) return retriesSubmission(error.context, error.cause);
  if (isBridgeError(error, 'CHAIN__RPC_FAILED')) return isTransientRpcFailure(error.context);
  if (isBridgeError(error, 'CRANK__ATTEMPT_DEADLINE_EXCEEDED')) return true;
  if (isBridgeError(error, 'SIGNER__UNAVAILABLE')) return RETRIED_SIGNER_FAILURES.has(error.context.reason);
  return !isBridgeError(error);
}

/**
 * SPEC §3 failure rule: BRIDGE_CRANK_MAX_ATTEMPTS attempts in total per action. With
 * `retriesAction`, the crank's `failed` state decides by it whether to back off and try again.
 */
export function hasAttemptsLeft(failedAttempts: number, maxAttempts: number): boolean {
  return failedAttempts < maxAttempts;
}

// A token that went away (removed, an HSM restarting) or failed one signature: the next attempt
// re-opens the session and logs in. A refused PIN is not retried: a few wrong PINs lock a token.
// A key service that timed out, throttled or failed inside is asked again; a refused
// permission or a disabled key waits for an operator. A signature that does not verify
// (`key_mismatch`) is never retried, whichever signer made it (docs/key-custody.md).
const RETRIED_SIGNER_FAILURES: ReadonlySet<SignerFailure> = new Set(['session_lost', 'sign_failed', 'token_not_found', 'service_unavailable']);

function retriesSubmission(facts: SubmitFacts, cause: unknown): boolean {
  switch (facts.outcome) {
    case 'not_landed':
    case 'unknown':
    case 'stale_plan':
      return true;
    case 'foreign_vote':
    case 'entries_refused':
      return false;
    case 'refused':
    case 'landed_with_error':
      if (facts.programError !== undefined) return STALE_VIEW_PROGRAM_ERRORS.has(facts.programError);
      return facts.transactionError !== undefined && TRANSIENT_TRANSACTION_ERRORS.has(facts.transactionError);
    case 'failed':
      return retriesAction(cause);
  }
}

/** What of a batch is sent again within the attempt after the program refused one instruction of it. */
export type BatchResend = 'nothing' | 'before_refused' | 'all_but_refused';

/**
 * A batch is all or nothing: when the program refuses the instruction at `position`, nothing of
 * the transaction took effect. Votes land in index order, so none past a refused vote can land:
 * the valid votes before it are sent again (once), then the refusal ends the attempt for
 * `retriesAction` to judge. Cleanups are independent: the refused entry is taken out and the
 * rest is sent again.
 */
export function resendAfterRefusal(action: CrankAction, position: number): BatchResend {
  if (action === 'cleanup_deposit') return 'all_but_refused';
  return position > 0 ? 'before_refused' : 'nothing';
}

/**
 * Transactions of a failed action that landed (CHAIN__FAILED_TO_SUBMIT): those that landed
 * before the failure and, when the failure is a transaction that landed with an error
 * (outcome `landed_with_error`, naming its signature), that one too: it is on chain and its fee
 * was paid. An `unknown` outcome's signature is a transaction that may still land.
 */
export function landedSignaturesOf(error: unknown): string[] {
  if (!isBridgeError(error, 'CHAIN__FAILED_TO_SUBMIT')) return [];
  const { landedSignatures, signature } = error.context;
  if (error.context.outcome !== 'landed_with_error' || signature === undefined || landedSignatures.includes(signature)) return landedSignatures;
  return [...landedSignatures, signature];
}
