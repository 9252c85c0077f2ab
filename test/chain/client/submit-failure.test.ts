import { describe, expect, it } from 'vitest';
import { classifyTransactionError, isAlreadyProcessed } from '../../../src/chain/client/submit-failure.js';

describe('classifyTransactionError', () => {
  it.each([
    { err: { InstructionError: [0, { Custom: 6001 }] }, reason: 'VoteOutOfOrder (6001)', instruction: 0 },
    { err: { InstructionError: [3, { Custom: 6006 }] }, reason: 'CleanupAlreadyCompleted (6006)', instruction: 3 },
    { err: { InstructionError: [1, { Custom: 102 }] }, reason: 'InstructionDidNotDeserialize (102)', instruction: 1 },
    { err: { InstructionError: [0, { Custom: 7777 }] }, reason: 'custom program error 7777, not listed in PROTOCOL.md', instruction: 0 },
    { err: { InstructionError: [0, 'ComputationalBudgetExceeded'] }, reason: 'ComputationalBudgetExceeded in instruction 0' },
    { err: 'BlockhashNotFound', reason: 'BlockhashNotFound' },
    { err: 'AccountInUse', reason: 'AccountInUse' },
    { err: 'WouldExceedMaxBlockCostLimit', reason: 'WouldExceedMaxBlockCostLimit' },
    { err: 'InsufficientFundsForFee', reason: 'InsufficientFundsForFee: the authority cannot pay the fee; fund it on this chain' },
    { err: 'AccountNotFound', reason: 'AccountNotFound: the authority cannot pay the fee; fund it on this chain' },
    { err: 'SanitizeFailure', reason: 'SanitizeFailure' },
    { err: { InsufficientFundsForRent: { account_index: 0 } }, reason: '{"InsufficientFundsForRent":{"account_index":0}}' },
  ])('$reason', ({ err, reason, instruction }) => {
    const failure = classifyTransactionError(err);
    expect(failure.reason).toBe(reason);
    expect(failure.programError?.instructionIndex).toBe(instruction);
  });

  it('names a runtime error as a fact, a program error by its PROTOCOL.md name', () => {
    expect(classifyTransactionError('BlockhashNotFound').transactionError).toBe('BlockhashNotFound');
    expect(classifyTransactionError({ InstructionError: [2, 'ComputationalBudgetExceeded'] }).transactionError).toBe('ComputationalBudgetExceeded');
    expect(classifyTransactionError({ InstructionError: [0, { Custom: 6001 }] })).toMatchObject({ programError: { name: 'VoteOutOfOrder', code: 6001 } });
    expect(classifyTransactionError({ InstructionError: [0, { Custom: 6001 }] }).transactionError).toBeUndefined();
  });

  it('recognises AlreadyProcessed only', () => {
    expect(isAlreadyProcessed('AlreadyProcessed')).toBe(true);
    expect(isAlreadyProcessed('BlockhashNotFound')).toBe(false);
    expect(isAlreadyProcessed({ InstructionError: [0, 'AlreadyProcessed'] })).toBe(false);
  });
});
