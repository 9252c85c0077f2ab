import { TransactionInstruction, type AccountMeta, type PublicKey } from '@solana/web3.js';
import { encodeInstructionData, type BridgeInstruction, type InstructionArgs } from './instructions.js';

/**
 * The crank's TransactionInstructions (ack_deposit, ack_withdraw, cleanup_deposit) with
 * PROTOCOL.md's account lists; the users' and governance's are the devnet's
 * (devnet/instructions.ts), built on the same helpers. Every builder takes the program id
 * and the account addresses explicitly (derive them with ../pda.ts) plus the instruction's
 * arguments, so a builder never guesses a chain id.
 */

export const signer = (pubkey: PublicKey): AccountMeta => ({ pubkey, isSigner: true, isWritable: true });
export const writable = (pubkey: PublicKey): AccountMeta => ({ pubkey, isSigner: false, isWritable: true });
export const readonly = (pubkey: PublicKey): AccountMeta => ({ pubkey, isSigner: false, isWritable: false });

export function bridgeInstruction(programId: PublicKey, keys: AccountMeta[], ix: BridgeInstruction): TransactionInstruction {
  const data = encodeInstructionData(ix);
  return new TransactionInstruction({ programId, keys, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength) });
}

export type AckDepositParams = InstructionArgs<'ack_deposit'> & {
  programId: PublicKey;
  authority: PublicKey;
  withdrawTracker: PublicKey;
  /** The TokenPair PDA of `sourceMint` (it may not exist). */
  tokenPair: PublicKey;
};

export function ackDepositInstruction(p: AckDepositParams): TransactionInstruction {
  const { index, approve, amount, recipient, sourceMint } = p;
  return bridgeInstruction(p.programId, [signer(p.authority), writable(p.withdrawTracker), readonly(p.tokenPair)], {
    name: 'ack_deposit',
    index,
    approve,
    amount,
    recipient,
    sourceMint,
  });
}

export type AckWithdrawParams = InstructionArgs<'ack_withdraw'> & {
  programId: PublicKey;
  authority: PublicKey;
  depositTracker: PublicKey;
};

export function ackWithdrawInstruction(p: AckWithdrawParams): TransactionInstruction {
  const { index, approve, result } = p;
  return bridgeInstruction(p.programId, [signer(p.authority), writable(p.depositTracker)], {
    name: 'ack_withdraw',
    index,
    approve,
    result,
  });
}

export type CleanupDepositParams = InstructionArgs<'cleanup_deposit'> & {
  programId: PublicKey;
  payer: PublicKey;
  depositTracker: PublicKey;
  /** The entry's depositor (receives the refund). */
  depositor: PublicKey;
};

export function cleanupDepositInstruction(p: CleanupDepositParams): TransactionInstruction {
  return bridgeInstruction(p.programId, [signer(p.payer), writable(p.depositTracker), writable(p.depositor)], {
    name: 'cleanup_deposit',
    index: p.index,
  });
}
