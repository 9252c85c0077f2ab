import { FRAMEWORK_ERRORS, PROGRAM_ERRORS, type FrameworkErrorName, type ProgramErrorName } from '../../src/chain/program-errors.js';

/**
 * A failed bridge instruction. The bank reports it as `{"InstructionError":[ix,{"Custom":code}]}`;
 * the message is the program log's detail line (which account, which index, which value).
 */
export class ProgramError extends Error {
  override readonly name = 'ProgramError';
  readonly code: number;
  readonly errorName: ProgramErrorName | FrameworkErrorName;

  constructor(errorName: ProgramErrorName | FrameworkErrorName, message: string) {
    super(message);
    this.errorName = errorName;
    this.code = errorName in PROGRAM_ERRORS ? PROGRAM_ERRORS[errorName as ProgramErrorName] : FRAMEWORK_ERRORS[errorName as FrameworkErrorName];
  }
}

export function isProgramError(err: unknown): err is ProgramError {
  return err instanceof ProgramError;
}
