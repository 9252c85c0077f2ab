import { describe, expect, it } from 'vitest';
import { BridgeError, type SubmitOutcome } from '../../src/errors.js';
import { landedSignaturesOf } from '../../src/failure-policy.js';

function submitError(outcome: SubmitOutcome, landedSignatures: string[], signature?: string) {
  return new BridgeError(
    'CHAIN__FAILED_TO_SUBMIT',
    { chain: 'target', action: 'ack_deposit', outcome, landedSignatures, ...(signature === undefined ? {} : { signature }) },
    { tracker: 'T', reason: 'not landed' },
  );
}

describe('landedSignaturesOf', () => {
  it.each([
    ['an error of another kind', new Error('boom'), []],
    ['an RPC failure', new BridgeError('CHAIN__RPC_FAILED', { chain: 'source', method: 'getAccountInfo', kind: 'timeout' }, { what: 'getAccountInfo', reason: 'x' }), []],
    ['earlier batches only', submitError('not_landed', ['a', 'b']), ['a', 'b']],
    ['an unknown outcome: its signature may still land', submitError('unknown', ['a'], 'pending'), ['a']],
    ['a transaction that landed with a program error: its fee was paid', submitError('landed_with_error', ['a'], 'failed-on-chain'), ['a', 'failed-on-chain']],
    ['a landed-with-error signature already listed is not counted twice', submitError('landed_with_error', ['a', 'x'], 'x'), ['a', 'x']],
    ['a preflight refusal names no signature', submitError('refused', ['a']), ['a']],
  ])('%s', (_case, error, expected) => {
    expect(landedSignaturesOf(error)).toEqual(expected);
  });
});
