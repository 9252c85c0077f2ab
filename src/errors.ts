import { chainName, type ChainSide } from './domain.js';

/**
 * One error class for the whole server, with a code per failure and a typed context
 * (after anza-xyz/kit's `packages/errors`). Codes follow a small vocabulary:
 * MALFORMED_, INVALID_, _NOT_FOUND, _EXCEEDED, _FAILED_TO_. Messages name the account,
 * variable or method involved so that an operator can act on them.
 *
 * Each area owns its block below; add a code with its context type, its words
 * (BridgeErrorWords) and its message (BRIDGE_ERROR_MESSAGES): the context carries the
 * machine-readable facts, the table turns them into the sentence, so a code leads to its text.
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
  CHAIN__ACCOUNT_NOT_FOUND: { account: string; chain: ChainSide };
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
  /** A lane of the nonce pool is not this authority's initialized nonce account: `reason` says what it is instead, as read at `slot`. */
  CHAIN__INVALID_NONCE_ACCOUNT: { account: string; chain: ChainSide; reason: string; slot: number };
  /** A tracker stores other chain ids than configured; `variable` names the setting to check. */
  CHAIN__INVALID_CHAIN_ID: { account: string; variable: string; expected: number; actual: number };
  /** The authority cannot pay what `npm run ops -- nonce init` would pay on a chain: `needed` is that plus its own rent-exempt minimum. */
  CHAIN__INSUFFICIENT_FUNDS: { authority: string; chain: ChainSide; chainId: number; lamports: number; needed: number; paying: number };
  /**
   * The configured authority is not in a tracker's authority set (the chain client's read and
   * the planners look it up in one place, src/chain/port/authority-position.ts). `account`: the
   * tracker's address when the caller knows it.
   */
  CHAIN__AUTHORITY_NOT_FOUND: { account?: string; chain: ChainSide; authority: string };
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
    chain: ChainSide;
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

/**
 * What each code's message says beyond its context: the words an operator reads that no program
 * decides on (the setting to check, an advice, the text of the failure a code wraps). Empty
 * (`{}`) where the context says it all; then a thrower passes none.
 */
export interface BridgeErrorWords {
  /** `heading`: before the problems, when there are several of them. */
  CONFIG__INVALID: { heading?: string };
  /** `hint`: what to check after the field's reason; without it the reason is the whole sentence. */
  CHAIN__MALFORMED_ACCOUNT: { hint?: string };
  CHAIN__INVALID_DISCRIMINATOR: { accountType: string; hint: string };
  /** `variable`: the setting that names the program. */
  CHAIN__INVALID_OWNER: { variable: string };
  CHAIN__ACCOUNT_NOT_FOUND: { tracker: string; commitment: string; rpcUrlVariable: string; programIdVariable: string };
  /** `anchorName`: the Anchor name of `anchorCode` ('' when it has none). */
  CHAIN__MALFORMED_INSTRUCTION: { anchorName: string };
  /** `shown`: the value as the message quotes it. */
  CHAIN__INVALID_VOTE: { shown: string };
  /** `what` failed, `reason` (bounded), and `advice` when the kind of failure has one. */
  CHAIN__RPC_FAILED: { what: string; reason: string; advice?: string };
  /** `fix`: what makes the account usable again. */
  CHAIN__INVALID_NONCE_ACCOUNT: { fix: string };
  CHAIN__INVALID_CHAIN_ID: { tracker: string; field: string };
  CHAIN__INSUFFICIENT_FUNDS: Record<string, never>;
  CHAIN__AUTHORITY_NOT_FOUND: { tracker: string; authorityCount: number };
  /** `tracker`: the account the action wrote to; `fee`: what the transaction bid, once a send is priced. */
  CHAIN__FAILED_TO_SUBMIT: { tracker: string; reason: string; fee?: string };
  /** `signer`: `PKCS#11` or the key service's name; `detail`: what it said, safe for a terminal. */
  SIGNER__UNAVAILABLE: { signer: string; detail: string };
  CRANK__DISABLED: Record<string, never>;
  /** Why a request gets no cycle. */
  CRANK__STOPPED: { when: 'internal_error'; error: string } | { when: 'stopping' } | { when: 'before_cycle' };
  CRANK__BUSY: Record<string, never>;
  CRANK__ATTEMPT_DEADLINE_EXCEEDED: Record<string, never>;
  /** `read`: how many entries the read holds. */
  CRANK__ENTRY_NOT_FOUND: { read: number };
  TRANSFER__NOT_FOUND: Record<string, never>;
  TRANSFER__INVALID_PARAMETER: Record<string, never>;
  TRANSFER__BUSY: Record<string, never>;
  TRANSFER__RATE_EXCEEDED: Record<string, never>;
}

/** Each code's message from its context and words (kit's SolanaErrorMessages, as functions: the types check every field). */
const BRIDGE_ERROR_MESSAGES: { [C in BridgeErrorCode]: (context: BridgeErrorContexts[C], words: BridgeErrorWords[C]) => string } = {
  CONFIG__INVALID: ({ problems }, { heading }) => `${heading === undefined ? '' : `${heading}: `}${problems.join('; ')}`,
  CHAIN__MALFORMED_ACCOUNT: ({ account, field, reason }, { hint }) =>
    hint === undefined ? reason : `account ${account}: field ${field} ${reason}; ${hint}`,
  CHAIN__INVALID_DISCRIMINATOR: ({ account, expected, actual }, { accountType, hint }) =>
    `account ${account}: field discriminator is ${actual}, expected ${expected} (${accountType}); ${hint}`,
  CHAIN__INVALID_OWNER: ({ account, expected, actual }, { variable }) =>
    `account ${account}: owner is ${actual}, expected the bridge program ${expected}; a configuration error, not transient: check ${variable}`,
  CHAIN__ACCOUNT_NOT_FOUND: ({ account, chain }, { tracker, commitment, rpcUrlVariable, programIdVariable }) =>
    `${tracker} ${account} does not exist on the ${chainName(chain)} chain (commitment ${commitment}): a configuration error, not transient; ` +
    `check that ${rpcUrlVariable} points at a node of the right cluster, that ${programIdVariable} is the bridge program there, ` +
    'and BRIDGE_SOURCE_CHAIN_ID and BRIDGE_TARGET_CHAIN_ID',
  CHAIN__MALFORMED_INSTRUCTION: ({ instruction, reason, anchorCode }, { anchorName }) =>
    `instruction ${instruction}: ${reason} (Anchor error ${anchorCode} ${anchorName})`,
  CHAIN__INVALID_VOTE: ({ field, reason }, { shown }) => `${field} is ${shown}, ${reason}`,
  CHAIN__RPC_FAILED: (_context, { what, reason, advice }) => `${what} failed: ${reason}${advice === undefined ? '' : ` (${advice})`}`,
  CHAIN__INVALID_NONCE_ACCOUNT: ({ account, chain, reason }, { fix }) =>
    `nonce account ${account} on the ${chainName(chain)} chain ${reason}: its lane is out of use from the next cycle, ` +
    `its actions move to the pool's other lanes, and the chain lands in blockhash mode when no lane is left; ${fix}`,
  CHAIN__INVALID_CHAIN_ID: ({ account, variable, expected, actual }, { tracker, field }) =>
    `${tracker} ${account} stores ${field} ${actual}, but ${variable} is ${expected}; set ${variable} to the chain id the bridge was deployed with`,
  CHAIN__INSUFFICIENT_FUNDS: ({ authority, chain, chainId, lamports, needed, paying }) =>
    `authority ${authority} has ${lamports} lamports on chain ${chainId} (the ${chainName(chain)} chain); needs at least ${needed} ` +
    `(${paying} to pay, and ${needed - paying} for its own rent-exempt minimum): fund it and run the command again; nothing was sent`,
  CHAIN__AUTHORITY_NOT_FOUND: ({ account, chain, authority }, { tracker, authorityCount }) =>
    `authority ${authority} (BRIDGE_AUTHORITY_KEYPAIR) is not one of the ${authorityCount} authorities ` +
    `of ${tracker}${account === undefined ? '' : ` ${account}`} on the ${chainName(chain)} chain; check the keypair file and the chain ids`,
  CHAIN__FAILED_TO_SUBMIT: ({ chain, action, index, landedSignatures }, { tracker, reason, fee }) =>
    `${action} on ${chainName(chain)} tracker ${tracker} failed: ${reason}${index === undefined ? '' : ` at index ${index}`}` +
    `${fee === undefined ? '' : `; ${fee}`}` +
    (landedSignatures.length === 0 ? '' : ` (${landedSignatures.length} earlier transaction(s) of this action landed)`),
  SIGNER__UNAVAILABLE: (_context, { signer, detail }) => `${signer}: ${detail}`,
  CRANK__DISABLED: () =>
    'the crank is disabled because runtime configuration is absent (set BRIDGE_SOURCE_RPC_URL, BRIDGE_TARGET_RPC_URL, ' +
    'BRIDGE_SOURCE_CHAIN_ID, BRIDGE_TARGET_CHAIN_ID and BRIDGE_AUTHORITY_KEYPAIR, then restart)',
  CRANK__STOPPED: (_context, words) =>
    words.when === 'internal_error'
      ? `the crank stopped on an internal error: ${words.error}`
      : words.when === 'stopping'
        ? 'the crank is stopping or stopped and runs no more cycles'
        : 'the crank stopped before the cycle for this request completed',
  CRANK__BUSY: ({ waiting, limit }) =>
    `${waiting} crank requests already wait for the next cycle (at most ${limit}); try again after it, or read /health`,
  CRANK__ATTEMPT_DEADLINE_EXCEEDED: ({ action, deadlineMs }) =>
    `${action} attempt cut after ${Math.round(deadlineMs / 1000)} s (one transaction's life, docs/crank.md "Bounds"): ` +
    'the chain is not confirming or the RPC is not answering; a transaction left without an outcome is resolved by the next attempt',
  CRANK__ENTRY_NOT_FOUND: ({ tracker, index, windowStart, windowEnd }, { read }) =>
    `${tracker} entry ${index} is not among the ${read} entries BridgeChains.readState read ` +
    `(between ${windowStart} and ${windowEnd}); the read must hold entries from every position ` +
    'the crank votes or cleans from (docs/crank.md "What the planners read")',
  TRANSFER__NOT_FOUND: ({ index, entryCount }) =>
    `transfer ${index} does not exist: the source DepositTracker has ${entryCount} entries${entryCount > 0 ? ` (indices 0..${entryCount - 1})` : ''}`,
  TRANSFER__INVALID_PARAMETER: ({ parameter, value, reason }) => `${parameter}: ${reason}, got ${JSON.stringify(value)}`,
  TRANSFER__BUSY: ({ inFlight, limit }) =>
    `${inFlight} different transfer reads are already running (at most ${limit}); retry shortly, or ask for a range already being read`,
  TRANSFER__RATE_EXCEEDED: ({ perSecond, waitMaxMs }) =>
    `GET /transfers answers at most ${perSecond} requests a second and every turn of the next ${waitMaxMs / 1000} s is taken; retry shortly`,
};

/** Every code, at run time (a test checks each has an HTTP answer, src/http/errors.ts). */
export const BRIDGE_ERROR_CODES = Object.keys(BRIDGE_ERROR_MESSAGES) as BridgeErrorCode[];

export type RpcFailureKind =
  | 'timeout'
  | 'http'
  | 'rpc'
  | 'network'
  | 'tls'
  | 'malformed'
  | 'too_large'
  | 'unavailable'
  | 'invalid_result'
  | 'unexpected';

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

/** The words a code needs; none (or `undefined` before options) where its words are all optional. */
type MessageArgs<C extends BridgeErrorCode> =
  Record<never, never> extends BridgeErrorWords[C]
    ? [words?: BridgeErrorWords[C], options?: { cause?: unknown }]
    : [words: BridgeErrorWords[C], options?: { cause?: unknown }];

export class BridgeError<C extends BridgeErrorCode = BridgeErrorCode> extends CodedError<BridgeErrorContexts, C> {
  override readonly name = 'BridgeError';
  /** Kept so that a failure passed on with more context (an endpoint, a fee, what landed) says the same words. */
  readonly words: BridgeErrorWords[C];

  constructor(code: C, context: BridgeErrorContexts[C], ...[words, options]: MessageArgs<C>) {
    const given = (words ?? {}) as BridgeErrorWords[C];
    const message = BRIDGE_ERROR_MESSAGES[code] as (context: BridgeErrorContexts[C], words: BridgeErrorWords[C]) => string;
    super(code, context, message(context, given), options);
    this.words = given;
  }
}

export function isBridgeError<C extends BridgeErrorCode>(err: unknown, code?: C): err is BridgeError<C> {
  return err instanceof BridgeError && (code === undefined || err.code === code);
}

/** A one-line description of any thrown value, for logs and `crank.last_error`. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
