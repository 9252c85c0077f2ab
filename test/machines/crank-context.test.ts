import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.js';
import { landedSignaturesOf } from '../../src/machines/crank-context.js';

function submitError(retryable: boolean, landedSignatures: string[], signature?: string) {
  return new BridgeError(
    'CHAIN__FAILED_TO_SUBMIT',
    { chain: 'target', action: 'ack_deposit', retryable, landedSignatures, ...(signature === undefined ? {} : { signature }) },
    'ack_deposit failed',
  );
}

describe('landedSignaturesOf', () => {
  it.each([
    ['an error of another kind', new Error('boom'), []],
    ['an RPC failure', new BridgeError('CHAIN__RPC_FAILED', { chain: 'source', method: 'getAccountInfo', retryable: true }, 'x'), []],
    ['earlier batches only', submitError(true, ['a', 'b']), ['a', 'b']],
    ['a retryable failure: its signature has an unknown outcome', submitError(true, ['a'], 'pending'), ['a']],
    ['a transaction that landed with a program error: its fee was paid', submitError(false, ['a'], 'failed-on-chain'), ['a', 'failed-on-chain']],
    ['a landed-with-error signature already listed is not counted twice', submitError(false, ['a', 'x'], 'x'), ['a', 'x']],
    ['a preflight refusal names no signature', submitError(false, ['a']), ['a']],
  ])('%s', (_case, error, expected) => {
    expect(landedSignaturesOf(error)).toEqual(expected);
  });
});
