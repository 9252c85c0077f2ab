/** JSON-RPC errors with the codes a Solana RPC node uses. */

export const RPC_ERRORS = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  SEND_TRANSACTION_PREFLIGHT_FAILURE: -32002,
  TRANSACTION_SIGNATURE_VERIFICATION_FAILURE: -32003,
  NODE_UNHEALTHY: -32005,
  TRANSACTION_HISTORY_NOT_AVAILABLE: -32011,
  MIN_CONTEXT_SLOT_NOT_REACHED: -32016,
} as const;

export class RpcError extends Error {
  override readonly name = 'RpcError';
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }

  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/** Agave's answer to a history read on a node started without transaction history. */
export function historyNotAvailable(): RpcError {
  return new RpcError(RPC_ERRORS.TRANSACTION_HISTORY_NOT_AVAILABLE, 'Transaction history is not available from this node');
}

export function invalidParams(message: string): RpcError {
  return new RpcError(RPC_ERRORS.INVALID_PARAMS, message);
}
