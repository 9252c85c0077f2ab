import { describe, expect, it } from 'vitest';
import { classifyTransactionError, isAlreadyProcessed } from '../../../src/chain/client/transaction-failure.js';

describe('classifyTransactionError', () => {
  it.each([
    { err: { InstructionError: [0, { Custom: 6001 }] }, retryable: false, reason: 'VoteOutOfOrder (6001)', instruction: 0 },
    { err: { InstructionError: [3, { Custom: 6006 }] }, retryable: false, reason: 'CleanupAlreadyCompleted (6006)', instruction: 3 },
    { err: { InstructionError: [1, { Custom: 102 }] }, retryable: false, reason: 'InstructionDidNotDeserialize (102)', instruction: 1 },
    { err: { InstructionError: [0, { Custom: 7777 }] }, retryable: false, reason: 'custom program error 7777, not listed in PROTOCOL.md', instruction: 0 },
    { err: { InstructionError: [0, 'ComputationalBudgetExceeded'] }, retryable: false, reason: '{"InstructionError":[0,"ComputationalBudgetExceeded"]}' },
    { err: 'BlockhashNotFound', retryable: true, reason: 'BlockhashNotFound' },
    { err: 'AccountInUse', retryable: true, reason: 'AccountInUse' },
    { err: 'WouldExceedMaxBlockCostLimit', retryable: true, reason: 'WouldExceedMaxBlockCostLimit' },
    { err: 'InsufficientFundsForFee', retryable: false, reason: 'InsufficientFundsForFee: the authority cannot pay the fee; fund it on this chain' },
    { err: 'AccountNotFound', retryable: false, reason: 'AccountNotFound: the authority cannot pay the fee; fund it on this chain' },
    { err: 'SanitizeFailure', retryable: false, reason: 'SanitizeFailure' },
    { err: { InsufficientFundsForRent: { account_index: 0 } }, retryable: false, reason: '{"InsufficientFundsForRent":{"account_index":0}}' },
  ])('$reason -> retryable $retryable', ({ err, retryable, reason, instruction }) => {
    const failure = classifyTransactionError(err);
    expect(failure.retryable).toBe(retryable);
    expect(failure.reason).toBe(reason);
    expect(failure.programError?.instructionIndex).toBe(instruction);
  });

  it('recognises AlreadyProcessed only', () => {
    expect(isAlreadyProcessed('AlreadyProcessed')).toBe(true);
    expect(isAlreadyProcessed('BlockhashNotFound')).toBe(false);
    expect(isAlreadyProcessed({ InstructionError: [0, 'AlreadyProcessed'] })).toBe(false);
  });
});
