import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BridgeError, type BridgeErrorContexts, type SignerFailure, type SubmitOutcome } from '../src/errors.js';
import {
  hasAttemptsLeft,
  isTransientRpcFailure,
  landedSignaturesOf,
  resendAfterRefusal,
  retriesAction,
  type BatchResend,
} from '../src/failure-policy.js';

/**
 * docs/failure-policy.md, row by row, against src/failure-policy.ts: each row's facts as the
 * chain layer reports them, and the decision the table states.
 */

type RpcFacts = Omit<BridgeErrorContexts['CHAIN__RPC_FAILED'], 'chain' | 'method'>;

const rpc = (facts: RpcFacts) =>
  new BridgeError('CHAIN__RPC_FAILED', { chain: 'source', method: 'getAccountInfo', ...facts }, { what: 'getAccountInfo', reason: 'rpc failed' });
const submit = (outcome: SubmitOutcome, facts: Partial<BridgeErrorContexts['CHAIN__FAILED_TO_SUBMIT']> = {}, cause?: unknown) =>
  new BridgeError(
    'CHAIN__FAILED_TO_SUBMIT',
    { chain: 'target', action: 'ack_deposit', outcome, landedSignatures: [], ...facts },
    { tracker: 'T', reason: 'submit failed' },
    { cause },
  );
const signer = (reason: SignerFailure) => new BridgeError('SIGNER__UNAVAILABLE', { reason }, { signer: 'signer', detail: reason });
const refusedWith = (programError: string) => submit('refused', { programError });
const landedWith = (transactionError: string) => submit('landed_with_error', { transactionError, signature: 'sig' });

/** The doc's rows (first cell) with the failures they describe. */
const ROWS: Record<string, unknown[]> = {
  'RPC: timeout': [rpc({ kind: 'timeout' })],
  'RPC: network error (refused, reset)': [rpc({ kind: 'network' })],
  'RPC: TLS handshake failed (an https:// URL to a plain-HTTP node, a certificate that does not verify)': [rpc({ kind: 'tls' })],
  'RPC: HTTP 429, 408 or 5xx': [429, 408, 500, 502, 503].map((status) => rpc({ kind: 'http', status })),
  'RPC: HTTP 401, 403 or 404': [401, 403, 404].map((status) => rpc({ kind: 'http', status })),
  'RPC: HTTP 400 or another 4xx': [400, 405, 413].map((status) => rpc({ kind: 'http', status })),
  'RPC: JSON-RPC -32011 (no transaction history)': [rpc({ kind: 'rpc', rpcCode: -32011 })],
  'RPC: JSON-RPC -32005 (node behind), -32016 (min context slot), -32603 (internal)': [-32005, -32016, -32603].map((rpcCode) =>
    rpc({ kind: 'rpc', rpcCode }),
  ),
  'RPC: JSON-RPC -32601 (method not found), -32602 (invalid params) and the other request errors': [
    -32700, -32600, -32601, -32602, -32003, -32015,
  ].map((rpcCode) => rpc({ kind: 'rpc', rpcCode })),
  'RPC: malformed or oversized body': [rpc({ kind: 'malformed' }), rpc({ kind: 'too_large' })],
  'RPC: every endpoint of the chain taken out': [rpc({ kind: 'unavailable' })],
  'RPC: an answer of the right shape that means nothing (a transaction that does not deserialize)': [rpc({ kind: 'invalid_result' })],
  'Action: the transaction expired without landing (dropped, or every send failed)': [submit('not_landed')],
  'Action: not confirmed in time, may still land': [submit('unknown', { signature: 'sig' })],
  'Action: the tracker moved past the plan': [submit('stale_plan')],
  'Action: program error VoteOutOfOrder, VoteMismatch, InvalidVote, EntryNotFound or EntryNotFinalized': [
    ...['VoteOutOfOrder', 'VoteMismatch', 'InvalidVote', 'EntryNotFound', 'EntryNotFinalized'].map(refusedWith),
    submit('landed_with_error', { programError: 'VoteOutOfOrder', signature: 'sig' }),
  ],
  'Action: program error NotAnAuthority, InvalidAccount, TrackerFull, InvalidResult or another': [
    'NotAnAuthority',
    'InvalidAccount',
    'TrackerFull',
    'InvalidResult',
    'CleanupAlreadyCompleted',
  ].map(refusedWith),
  'Action: runtime error BlockhashNotFound, AccountInUse, ClusterMaintenance or a block cost limit': [
    'BlockhashNotFound',
    'AccountInUse',
    'ClusterMaintenance',
    'WouldExceedMaxBlockCostLimit',
  ].map((name) => submit('refused', { transactionError: name })),
  "Action: ComputationalBudgetExceeded (an instruction passed the transaction's compute-unit limit)": [
    submit('refused', { transactionError: 'ComputationalBudgetExceeded' }),
    landedWith('ComputationalBudgetExceeded'),
  ],
  'Action: InsufficientFundsForFee or AccountNotFound (the fee payer)': [
    landedWith('InsufficientFundsForFee'),
    submit('refused', { transactionError: 'AccountNotFound' }),
  ],
  'Action: votes this server never sent moved its position (another signer)': [submit('foreign_vote')],
  'Action: some entries of a cleanup refused by the program': [submit('entries_refused')],
  "Action: the attempt ran past its deadline (one transaction's life)": [
    new BridgeError('CRANK__ATTEMPT_DEADLINE_EXCEEDED', { action: 'ack_deposit', deadlineMs: 60_000 }),
  ],
  'Signer: the PKCS#11 session lost, a signature refused or the token not found (token removed, HSM restarting)': (
    ['session_lost', 'sign_failed', 'token_not_found'] as const
  ).map(signer),
  'Signer: the token refused the PIN, the key is gone, changed or not Ed25519, the module does not load': (
    ['login_refused', 'key_not_found', 'key_changed', 'not_ed25519', 'module_not_loaded'] as const
  ).map(signer),
  "Signer: a signature that does not verify with the authority's public key, from a key file, a token or a key service": [signer('key_mismatch')],
  'Signer: a key service did not answer in time, throttled or failed inside (a 5xx)': [signer('service_unavailable')],
  'Signer: a key service refused a permission or the key is disabled': (['permission_denied', 'key_unusable'] as const).map(signer),
  'A configuration or contract error (a missing or malformed tracker, an unknown authority, a planner that lacks an entry)': [
    new BridgeError(
      'CHAIN__ACCOUNT_NOT_FOUND',
      { account: 'T', chain: 'source' },
      { tracker: 'DepositTracker', commitment: 'finalized', rpcUrlVariable: 'BRIDGE_SOURCE_RPC_URL', programIdVariable: 'BRIDGE_SOURCE_PROGRAM_ID' },
    ),
    new BridgeError('CHAIN__MALFORMED_ACCOUNT', { account: 'T', field: 'capacity', reason: 'too large' }),
    new BridgeError('CHAIN__AUTHORITY_NOT_FOUND', { chain: 'target', authority: 'A' }, { tracker: 'WithdrawTracker', authorityCount: 3 }),
    new BridgeError('CRANK__ENTRY_NOT_FOUND', { tracker: 'DepositTracker', index: 1, windowStart: 2, windowEnd: 3 }, { read: 0 }),
  ],
  'Anything unexpected (not a BridgeError)': [new TypeError('fetch failed'), 'a thrown string'],
};

/** The rows (first cell) and decisions (second cell) of the table whose header's first cell is `header`. */
function documentedRows(header: string): Map<string, string> {
  const rows = new Map<string, string>();
  let inTable = false;
  for (const line of readFileSync(new URL('../docs/failure-policy.md', import.meta.url), 'utf8').split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells.length < 4) {
      inTable = false;
      continue;
    }
    if (cells[1] === header) inTable = true;
    if (!inTable || cells[1] === header || cells[1]!.startsWith('---')) continue;
    rows.set(cells[1]!, cells[2]!);
  }
  return rows;
}

/** The batch table's rows: the action, the refused position, and the decision its second cell states. */
const BATCH_ROWS: Record<string, { cases: [Parameters<typeof resendAfterRefusal>[0], number][]; decision: BatchResend }> = {
  'ack_deposit or ack_withdraw: a vote after the first of its batch': {
    cases: [
      ['ack_deposit', 1],
      ['ack_withdraw', 1],
      ['ack_deposit', 7],
    ],
    decision: 'before_refused',
  },
  'ack_deposit or ack_withdraw: the first vote of its batch': {
    cases: [
      ['ack_deposit', 0],
      ['ack_withdraw', 0],
    ],
    decision: 'nothing',
  },
  'cleanup_deposit: any entry': {
    cases: [
      ['cleanup_deposit', 0],
      ['cleanup_deposit', 3],
    ],
    decision: 'all_but_refused',
  },
};

// How each decision reads in the table's second cell.
const BATCH_DECISION_TEXT: Record<BatchResend, RegExp> = {
  before_refused: /^the votes before it, once/,
  nothing: /^nothing/,
  all_but_refused: /^all but that entry/,
};

describe('docs/failure-policy.md, the rest of a batch, against resendAfterRefusal', () => {
  const documented = documentedRows('Refused instruction (the facts)');

  it('every row of the table has cases here, and every case a row', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(BATCH_ROWS).sort());
  });

  it.each(Object.entries(BATCH_ROWS))('%s', (row, { cases, decision }) => {
    expect(documented.get(row)).toMatch(BATCH_DECISION_TEXT[decision]);
    for (const [action, position] of cases)
      expect({ action, position, decision: resendAfterRefusal(action, position) }).toEqual({ action, position, decision });
  });
});

describe('docs/failure-policy.md against src/failure-policy.ts', () => {
  const documented = documentedRows('Failure (the facts)');

  it('every row of the table has cases here, and every case a row', () => {
    const testedRows = [...Object.keys(ROWS), 'Action: an RPC failure inside the action'];
    expect([...documented.keys()].sort()).toEqual(testedRows.sort());
  });

  it.each(Object.entries(ROWS))('%s', (row, failures) => {
    const expected = documented.get(row) === 'yes';
    expect(['yes', 'no']).toContain(documented.get(row));
    for (const failure of failures)
      expect({ failure: String(failure), tried: retriesAction(failure) }).toEqual({ failure: String(failure), tried: expected });
  });

  it('an RPC failure inside an action decides as its RPC row says', () => {
    expect(documented.get('Action: an RPC failure inside the action')).toBe('as the RPC row says');
    expect(retriesAction(submit('failed', {}, rpc({ kind: 'rpc', rpcCode: -32005 })))).toBe(true);
    expect(retriesAction(submit('failed', {}, rpc({ kind: 'http', status: 400 })))).toBe(false);
    expect(retriesAction(submit('failed', {}, new TypeError('boom')))).toBe(true);
  });

  it('reads retry on exactly the RPC rows the table says yes to', () => {
    for (const [row, failures] of Object.entries(ROWS).filter(([row]) => row.startsWith('RPC: '))) {
      for (const failure of failures)
        expect(isTransientRpcFailure((failure as BridgeError<'CHAIN__RPC_FAILED'>).context)).toBe(documented.get(row) === 'yes');
    }
  });
});

describe('hasAttemptsLeft', () => {
  it.each([
    [1, 1, false],
    [1, 3, true],
    [2, 3, true],
    [3, 3, false],
    [4, 3, false],
  ])('after %i failed attempts of %i allowed -> %s', (failed, max, left) => {
    expect(hasAttemptsLeft(failed, max)).toBe(left);
  });
});

describe('landedSignaturesOf', () => {
  it.each([
    ['an error of another kind', new Error('boom'), []],
    ['an RPC failure', rpc({ kind: 'timeout' }), []],
    ['earlier batches only', submit('not_landed', { landedSignatures: ['a', 'b'] }), ['a', 'b']],
    ['an unknown outcome: its signature may still land', submit('unknown', { landedSignatures: ['a'], signature: 'pending' }), ['a']],
    [
      'a transaction that landed with a program error: its fee was paid',
      submit('landed_with_error', { landedSignatures: ['a'], signature: 'failed-on-chain' }),
      ['a', 'failed-on-chain'],
    ],
    [
      'a landed-with-error signature already listed is not counted twice',
      submit('landed_with_error', { landedSignatures: ['a', 'x'], signature: 'x' }),
      ['a', 'x'],
    ],
    ['a preflight refusal names no signature', submit('refused', { landedSignatures: ['a'] }), ['a']],
  ])('%s', (_case, error, expected) => {
    expect(landedSignaturesOf(error)).toEqual(expected);
  });
});
