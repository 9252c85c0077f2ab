/**
 * One error class for the whole server, with a code per failure and a typed context
 * (after anza-xyz/kit's `packages/errors`). Codes follow a small vocabulary:
 * MALFORMED_, INVALID_, _NOT_FOUND, _EXCEEDED, _FAILED_TO_. Messages name the account,
 * variable or method involved so that an operator can act on them.
 *
 * Each area owns its block below; add a code with its context type and keep messages in the
 * code that throws (the context carries the machine-readable facts).
 */
export interface BridgeErrorContexts {
  // --- config -----------------------------------------------------------------------------
  /** One or more environment problems; each line names the variable. */
  CONFIG__INVALID: { problems: string[] };

  // --- chain: codecs ----------------------------------------------------------------------
  /** Account bytes do not match the layout (too short, unknown tag, out-of-range field). */
  CHAIN__MALFORMED_ACCOUNT: { account: string; field: string; reason: string };
  /** First 8 bytes are not the expected account discriminator. */
  CHAIN__INVALID_DISCRIMINATOR: { account: string; expected: string; actual: string };
  /** The account is owned by another program than the configured one. */
  CHAIN__INVALID_OWNER: { account: string; expected: string; actual: string };
  /** The account does not exist on the chain. */
  CHAIN__ACCOUNT_NOT_FOUND: { account: string; chain: string };
  /** Instruction data that does not decode (wrong length, unknown discriminator, bad bool). */
  CHAIN__MALFORMED_INSTRUCTION: { instruction: string; reason: string; anchorCode: number };
  /** A JSON-safe vote field that has no on-chain form (a u64 string that is not canonical, a None result). */
  CHAIN__INVALID_VOTE: { field: string; value: string; reason: string };

  // --- chain: rpc and submission ---------------------------------------------------------
  // Facts only: whether a failure is tried again is src/failure-policy.ts's decision.
  /**
   * An RPC call failed or timed out. `kind` says how (the `kind` label of
   * bridge_rpc_errors_total where the transport saw it; `tls`: the TLS handshake failed, a
   * configuration error such as an https:// URL to a plain-HTTP node; `unavailable`: every endpoint of the
   * chain is taken out; `invalid_result`: an answer of the right shape that means nothing;
   * `unexpected`: any other failure). `status` is the HTTP status, `rpcCode` the JSON-RPC error
   * code when the node answered with one, `endpoint` the origin of the endpoint that failed when
   * the chain has a pool of them.
   */
  CHAIN__RPC_FAILED: {
    chain: string;
    method: string;
    kind: RpcFailureKind;
    status?: number;
    rpcCode?: number;
    /** The node's Retry-After as honoured: at most RETRY_AFTER_MAX_MS (src/chain/rpc/rpc-failure.ts). */
    retryAfterMs?: number;
    /** A Retry-After that was not honoured as sent (above the ceiling, not finite, unreadable): the header, bounded. */
    retryAfterRefused?: string;
    endpoint?: string;
  };
  /** A tracker stores other chain ids than configured; `variable` names the setting to check. */
  CHAIN__INVALID_CHAIN_ID: { account: string; variable: string; expected: number; actual: number };
  /**
   * The configured authority is not in a tracker's authority set (the chain client's read and
   * the planners look it up in one place, src/chain/authority-position.ts). `account`: the
   * tracker's address when the caller knows it.
   */
  CHAIN__AUTHORITY_NOT_FOUND: { account?: string; chain: string; authority: string };
  /**
   * A crank action failed. `outcome` says what became of it: `refused` (preflight refused it:
   * nothing landed), `landed_with_error` (it landed with an error; its fee was paid;
   * `signature` names it), `not_landed` (its blockhash expired and it never landed), `unknown`
   * (not confirmed in time: it may still land; `signature` names it and the next attempt
   * resolves it first), `stale_plan` (the tracker moved past the plan), `foreign_vote` (the
   * authority's position moved past votes no transaction of this server carried),
   * `entries_refused` (the program refused some entries of a cleanup), `failed` (another failure
   * inside the action: `cause`). `programError` is the PROTOCOL.md name when the program
   * refused it, `transactionError` the runtime error's name otherwise. `landedSignatures` lists
   * earlier batches of the same action that did land.
   */
  CHAIN__FAILED_TO_SUBMIT: {
    chain: string;
    action: string;
    outcome: SubmitOutcome;
    programError?: string;
    customCode?: number;
    transactionError?: string;
    /** The entry index whose instruction failed, when the failure names one. */
    index?: number;
    signature?: string;
    /** `not_landed`: sends of the transaction an RPC node accepted (0: every send failed). */
    sendsAccepted?: number;
    landedSignatures: string[];
  };

  // --- the authority signer -------------------------------------------------------------
  /**
   * The signer (a PKCS#11 token, a key service) did not sign (or, at start, could not be used). `reason` is the fact the
   * failure policy decides on: `session_lost` (a token removed, an HSM restarted: the next
   * signature re-opens and logs in), `sign_failed`, `token_not_found`, `module_not_loaded`,
   * `login_refused` (the PIN), `key_not_found`, `key_changed` (another key after a re-open),
   * `key_mismatch` (the pair does not belong together, or a signature that does not verify),
   * `not_ed25519`. A key service (AWS KMS, Google Cloud KMS, Vault transit) adds
   * `service_unavailable` (a timeout, throttling, a 5xx: tried again), `permission_denied` (the
   * message names the permission) and `key_unusable` (disabled, pending deletion, wrong usage).
   */
  SIGNER__UNAVAILABLE: { reason: SignerFailure };

  // --- crank --------------------------------------------------------------------------------
  /** POST /crank/once or another crank request while no runtime configuration is present. */
  CRANK__DISABLED: Record<string, never>;
  /** The crank is shutting down and takes no more cycles. */
  CRANK__STOPPED: Record<string, never>;
  /** Too many POST /crank/once requests already wait for the next cycle. */
  CRANK__BUSY: { waiting: number; limit: number };
  /**
   * An attempt of a crank action ran past its deadline (one transaction's life, delays.ts):
   * cut, and tried again; a transaction it left without an outcome is resolved by the next attempt.
   */
  CRANK__ATTEMPT_DEADLINE_EXCEEDED: { action: string; deadlineMs: number };
  /** The planner needs an entry that BridgeChains.readState did not read (outside its window). */
  CRANK__ENTRY_NOT_FOUND: { tracker: string; index: number; windowStart: number; windowEnd: number };

  // --- operator reads (GET /transfers, npm run ops) ------------------------------------------
  /** A transfer index at or past the source DepositTracker's entry_count. */
  TRANSFER__NOT_FOUND: { index: number; entryCount: number };
  /** A query or path parameter out of range; `parameter` names it. */
  TRANSFER__INVALID_PARAMETER: { parameter: string; value: string; reason: string };
  /** GET /transfers would start a read while MAX_TRANSFER_READS_IN_FLIGHT others run. */
  TRANSFER__BUSY: { inFlight: number; limit: number };
  /** GET /transfers answers are paced (src/http/transfer-pace.ts): no turn within `waitMaxMs`. */
  TRANSFER__RATE_EXCEEDED: { perSecond: number; waitMaxMs: number };
}

export type BridgeErrorCode = keyof BridgeErrorContexts;

export type RpcFailureKind = 'timeout' | 'http' | 'rpc' | 'network' | 'tls' | 'malformed' | 'too_large' | 'unavailable' | 'invalid_result' | 'unexpected';

export type SignerFailure =
  | 'session_lost'
  | 'sign_failed'
  | 'token_not_found'
  | 'module_not_loaded'
  | 'login_refused'
  | 'key_not_found'
  | 'key_changed'
  | 'key_mismatch'
  | 'not_ed25519'
  | 'service_unavailable'
  | 'permission_denied'
  | 'key_unusable';

export type SubmitOutcome = 'refused' | 'landed_with_error' | 'not_landed' | 'unknown' | 'stale_plan' | 'foreign_vote' | 'entries_refused' | 'failed';

/** An error with a code and the typed context of that code: the server's BridgeError, the devnet's DevnetError. */
export class CodedError<Contexts, C extends keyof Contexts> extends Error {
  readonly code: C;
  readonly context: Contexts[C];

  constructor(code: C, context: Contexts[C], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.context = context;
  }
}

export class BridgeError<C extends BridgeErrorCode = BridgeErrorCode> extends CodedError<BridgeErrorContexts, C> {
  override readonly name = 'BridgeError';
}

export function isBridgeError<C extends BridgeErrorCode>(err: unknown, code?: C): err is BridgeError<C> {
  return err instanceof BridgeError && (code === undefined || err.code === code);
}

/** A one-line description of any thrown value, for logs and `crank.last_error`. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
