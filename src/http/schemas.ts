/**
 * Response schemas of SPEC §2.2 and §2.3. fastify serializes with them, so a response carries
 * exactly these fields in the wire's snake_case whatever else the crank's objects hold.
 */

const nullableInteger = { type: ['integer', 'null'] } as const;
const nullableString = { type: ['string', 'null'] } as const;

const crankHealthSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled', 'last_run_at', 'last_success_at', 'last_error', 'last_action', 'total_actions_submitted'],
  properties: {
    enabled: { type: 'boolean' },
    last_run_at: nullableInteger,
    last_success_at: nullableInteger,
    last_error: nullableString,
    last_action: nullableString,
    total_actions_submitted: { type: 'integer' },
    // BRIDGE_DRY_RUN only; absent otherwise, so the SPEC §2.2 shape is unchanged.
    dry_run: { type: 'boolean' },
    // An enabled crank only: which instance of the signer submits (docs/crank.md, "Role").
    role: { type: 'string', enum: ['active', 'standby'] },
    role_since: nullableInteger,
    // With runtime configuration: `file`, or `pkcs11` with the token's label and its session.
    signer: {
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      properties: { kind: { type: 'string', enum: ['file', 'pkcs11'] }, token: { type: 'string' }, session: { type: 'string', enum: ['open', 'lost'] } },
    },
    // Only while a check is off (no history on a chain's endpoints); absent otherwise.
    checks_off: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['check', 'chain', 'reason'],
        properties: { check: { type: 'string' }, chain: { type: 'string' }, reason: { type: 'string' } },
      },
    },
  },
} as const;

/** BridgeHealthSnapshot; HTTP 200 for ok and degraded, 503 for stalled. */
export const healthSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['status', 'service', 'crank'],
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded', 'stalled'] },
    service: { type: 'string' },
    crank: crankHealthSchema,
  },
} as const;

/** CrankReportResponse. */
export const crankReportSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['ack_deposit_attempted', 'ack_withdraw_attempted', 'cleanup_attempted', 'cleanup_completed'],
  properties: {
    ack_deposit_attempted: { type: 'boolean' },
    ack_withdraw_attempted: { type: 'boolean' },
    cleanup_attempted: { type: 'integer' },
    cleanup_completed: { type: 'integer' },
  },
} as const;

export const killSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['status', 'message'],
  properties: { status: { type: 'string' }, message: { type: 'string' } },
} as const;

/** POST /crank/poll: whether the nudge started a cycle or joined the running one. */
export const pollSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: { status: { type: 'string', enum: ['started', 'coalesced'] } },
} as const;
