import { describe, expect, it } from 'vitest';
import {
  FRAMEWORK_ERRORS,
  PROGRAM_ERRORS,
  classifyTransactionError,
  decodeProgramError,
  isAlreadyProcessed,
  programErrorName,
} from '../../src/chain/program-errors.js';

/** PROTOCOL.md "Errors", copied as a table. */
const protocolTable: [number, string][] = [
  [6000, 'NotAnAuthority'],
  [6001, 'VoteOutOfOrder'],
  [6002, 'VoteMismatch'],
  [6003, 'InvalidVote'],
  [6004, 'EntryNotFound'],
  [6005, 'EntryNotFinalized'],
  [6006, 'CleanupAlreadyCompleted'],
  [6007, 'TrackerFull'],
  [6008, 'InvalidAccount'],
  [6009, 'InvalidResult'],
  [6010, 'Unauthorized'],
  [6011, 'InvalidAmount'],
  [6012, 'NotWithdrawable'],
];

const frameworkTable: [number, string][] = [
  [0, 'AccountAlreadyInitialized'],
  [100, 'InstructionMissing'],
  [101, 'InstructionFallbackNotFound'],
  [102, 'InstructionDidNotDeserialize'],
  [2500, 'RequireViolated'],
];

describe('program error codes', () => {
  it('PROGRAM_ERRORS is exactly PROTOCOL.md table', () => {
    expect(Object.entries(PROGRAM_ERRORS).map(([name, code]) => [code, name])).toEqual(protocolTable);
  });

  it('FRAMEWORK_ERRORS holds the framework codes', () => {
    expect(
      Object.entries(FRAMEWORK_ERRORS)
        .map(([name, code]) => [code, name])
        .sort(([a], [b]) => Number(a) - Number(b)),
    ).toEqual(frameworkTable);
  });

  it.each([...protocolTable, ...frameworkTable])('programErrorName(%i) = %s', (code, name) => {
    expect(programErrorName(code)).toBe(name);
  });

  it.each([1, 99, 5999, 6013, -1])('programErrorName(%i) is undefined', (code) => {
    expect(programErrorName(code)).toBeUndefined();
  });
});

describe('decodeProgramError', () => {
  it.each([
    [{ InstructionError: [0, { Custom: 6001 }] }, { instructionIndex: 0, code: 6001, name: 'VoteOutOfOrder' }],
    [{ InstructionError: [3, { Custom: 6006 }] }, { instructionIndex: 3, code: 6006, name: 'CleanupAlreadyCompleted' }],
    [{ InstructionError: [1, { Custom: 0 }] }, { instructionIndex: 1, code: 0, name: 'AccountAlreadyInitialized' }],
    [{ InstructionError: [0, { Custom: 102 }] }, { instructionIndex: 0, code: 102, name: 'InstructionDidNotDeserialize' }],
    [{ InstructionError: [0, { Custom: 2500 }] }, { instructionIndex: 0, code: 2500, name: 'RequireViolated' }],
    [{ InstructionError: [2, { Custom: 42 }] }, { instructionIndex: 2, code: 42, name: 'Custom(42)' }],
    [JSON.parse('{"InstructionError":[0,{"Custom":6008}]}'), { instructionIndex: 0, code: 6008, name: 'InvalidAccount' }],
  ])('%j -> %j', (err, decoded) => {
    expect(decodeProgramError(err)).toEqual(decoded);
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'BlockhashNotFound'],
    ['a transaction-level error', { InsufficientFundsForRent: { account_index: 0 } }],
    ['a non-custom instruction error', { InstructionError: [0, 'InvalidAccountData'] }],
    ['a builtin error object', { InstructionError: [0, { BorshIoError: 'x' }] }],
    ['a negative index', { InstructionError: [-1, { Custom: 6000 }] }],
    ['a string code', { InstructionError: [0, { Custom: '6000' }] }],
    ['a fractional code', { InstructionError: [0, { Custom: 6000.5 }] }],
    ['a short tuple', { InstructionError: [0] }],
    ['an array', [0, { Custom: 6000 }]],
  ])('%s -> undefined', (_name, err) => {
    expect(decodeProgramError(err)).toBeUndefined();
  });
});

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
    expect(classifyTransactionError({ InstructionError: [0, { Custom: 6001 }] })).toMatchObject({
      programError: { name: 'VoteOutOfOrder', code: 6001 },
    });
    expect(classifyTransactionError({ InstructionError: [0, { Custom: 6001 }] }).transactionError).toBeUndefined();
  });

  it('recognises AlreadyProcessed only', () => {
    expect(isAlreadyProcessed('AlreadyProcessed')).toBe(true);
    expect(isAlreadyProcessed('BlockhashNotFound')).toBe(false);
    expect(isAlreadyProcessed({ InstructionError: [0, 'AlreadyProcessed'] })).toBe(false);
  });
});
