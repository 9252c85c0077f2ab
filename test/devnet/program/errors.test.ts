import { describe, expect, it } from 'vitest';
import { ProgramError } from '../../../devnet/program/errors.js';

// PROTOCOL.md "Errors", copied by hand: the program must report exactly these numbers.
const PROTOCOL_CODES = {
  NotAnAuthority: 6000,
  VoteOutOfOrder: 6001,
  VoteMismatch: 6002,
  InvalidVote: 6003,
  EntryNotFound: 6004,
  EntryNotFinalized: 6005,
  CleanupAlreadyCompleted: 6006,
  TrackerFull: 6007,
  InvalidAccount: 6008,
  InvalidResult: 6009,
  Unauthorized: 6010,
  InvalidAmount: 6011,
  NotWithdrawable: 6012,
  AccountAlreadyInitialized: 0,
  InstructionMissing: 100,
  InstructionFallbackNotFound: 101,
  InstructionDidNotDeserialize: 102,
  RequireViolated: 2500,
} as const;

describe('ProgramError', () => {
  it.each(Object.entries(PROTOCOL_CODES))('%s is code %i', (name, code) => {
    const error = new ProgramError(name as keyof typeof PROTOCOL_CODES, 'detail');
    expect(error.code).toBe(code);
    expect(error.errorName).toBe(name);
    expect(error.message).toBe('detail');
  });
});
