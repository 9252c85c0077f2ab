import { decodeInstructionData, type BridgeInstruction } from '../../src/chain/codec/instructions.js';
import { FRAMEWORK_ERRORS, programErrorName, type FrameworkErrorName } from '../../src/chain/program-errors.js';
import { isBridgeError } from '../../src/errors.js';
import { ackDeposit } from './ack-deposit.js';
import { ackWithdraw } from './ack-withdraw.js';
import { cleanupDeposit } from './cleanup.js';
import type { InstructionContext } from './context.js';
import { ProgramError } from './errors.js';
import { resetPending, setTokenPair } from './governance.js';
import { initializeDepositTracker, initializeWithdrawTracker } from './initialize.js';
import { deposit, withdraw } from './transfers.js';

/**
 * The bridge program of PROTOCOL.md: decodes the instruction data (Anchor framework errors
 * 100/101/102) and runs the handler. Throws ProgramError on any failure; the caller undoes the
 * whole transaction.
 */
export function executeBridgeInstruction(ctx: InstructionContext, data: Uint8Array): void {
  const ix = decode(data);
  ctx.log(`Program log: Instruction: ${pascalCase(ix.name)}`);
  dispatch(ctx, ix);
}

function decode(data: Uint8Array): BridgeInstruction {
  try {
    return decodeInstructionData(data);
  } catch (err) {
    if (isBridgeError(err, 'CHAIN__MALFORMED_INSTRUCTION')) {
      const name = programErrorName(err.context.anchorCode);
      if (name !== undefined && name in FRAMEWORK_ERRORS) throw new ProgramError(name as FrameworkErrorName, err.message);
    }
    throw err;
  }
}

function dispatch(ctx: InstructionContext, ix: BridgeInstruction): void {
  switch (ix.name) {
    case 'ack_deposit':
      return ackDeposit(ctx, ix);
    case 'ack_withdraw':
      return ackWithdraw(ctx, ix);
    case 'cleanup_deposit':
      return cleanupDeposit(ctx, ix);
    case 'initialize_deposit_tracker':
      return initializeDepositTracker(ctx, ix);
    case 'initialize_withdraw_tracker':
      return initializeWithdrawTracker(ctx, ix);
    case 'deposit':
      return deposit(ctx, ix);
    case 'withdraw':
      return withdraw(ctx, ix);
    case 'set_token_pair':
      return setTokenPair(ctx, ix);
    case 'reset_pending':
      return resetPending(ctx);
  }
}

function pascalCase(name: string): string {
  return name.replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
}
