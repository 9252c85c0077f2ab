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

  // --- chain: rpc and submission ----------------------------------------------------------
  /** An RPC call failed or timed out. `retryable` is true for transient faults. */
  CHAIN__RPC_FAILED: { chain: string; method: string; retryable: boolean; status?: number };
  /**
   * A transaction for a crank action failed. `programError` is the PROTOCOL.md name when the
   * program rejected it. `landedSignatures` lists earlier batches of the same action that did land.
   */
  CHAIN__FAILED_TO_SUBMIT: {
    chain: string;
    action: string;
    retryable: boolean;
    programError?: string;
    customCode?: number;
    signature?: string;
    landedSignatures: string[];
  };

  // --- crank --------------------------------------------------------------------------------
  /** POST /crank/once or another crank request while no runtime configuration is present. */
  CRANK__DISABLED: Record<string, never>;
  /** The crank is shutting down and takes no more cycles. */
  CRANK__STOPPED: Record<string, never>;
}

export type BridgeErrorCode = keyof BridgeErrorContexts;

export class BridgeError<C extends BridgeErrorCode = BridgeErrorCode> extends Error {
  override readonly name = 'BridgeError';
  readonly code: C;
  readonly context: BridgeErrorContexts[C];

  constructor(code: C, context: BridgeErrorContexts[C], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.context = context;
  }

  /** True when the failure is transient and the same action may succeed if tried again. */
  get retryable(): boolean {
    const context = this.context as { retryable?: unknown };
    return context.retryable === true;
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
