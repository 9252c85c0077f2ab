import { TransactionInstruction, type AccountMeta, type PublicKey } from '@solana/web3.js';
import { encodeInstructionData, type BridgeInstruction, type InstructionArgs } from './instructions.js';

/**
 * TransactionInstructions with PROTOCOL.md's account lists. Every builder takes the program id
 * and the account addresses explicitly (derive them with ../pda.ts) plus the instruction's
 * arguments, so a builder never guesses a chain id.
 */

const signer = (pubkey: PublicKey): AccountMeta => ({ pubkey, isSigner: true, isWritable: true });
const writable = (pubkey: PublicKey): AccountMeta => ({ pubkey, isSigner: false, isWritable: true });
const readonly = (pubkey: PublicKey): AccountMeta => ({ pubkey, isSigner: false, isWritable: false });

function bridgeInstruction(programId: PublicKey, keys: AccountMeta[], ix: BridgeInstruction): TransactionInstruction {
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

export type InitializeDepositTrackerParams = InstructionArgs<'initialize_deposit_tracker'> & {
  programId: PublicKey;
  /** Signs and becomes the tracker's governance. */
  governance: PublicKey;
  depositTracker: PublicKey;
};

export function initializeDepositTrackerInstruction(p: InitializeDepositTrackerParams): TransactionInstruction {
  const { targetChainId, capacity, threshold, authorities } = p;
  return bridgeInstruction(p.programId, [signer(p.governance), writable(p.depositTracker)], {
    name: 'initialize_deposit_tracker',
    targetChainId,
    capacity,
    threshold,
    authorities,
  });
}

export type InitializeWithdrawTrackerParams = InstructionArgs<'initialize_withdraw_tracker'> & {
  programId: PublicKey;
  governance: PublicKey;
  withdrawTracker: PublicKey;
};

export function initializeWithdrawTrackerInstruction(p: InitializeWithdrawTrackerParams): TransactionInstruction {
  const { sourceChainId, capacity, threshold, authorities } = p;
  return bridgeInstruction(p.programId, [signer(p.governance), writable(p.withdrawTracker)], {
    name: 'initialize_withdraw_tracker',
    sourceChainId,
    capacity,
    threshold,
    authorities,
  });
}

export type DepositParams = InstructionArgs<'deposit'> & {
  programId: PublicKey;
  /** Signs; recorded as the entry's depositor. */
  depositor: PublicKey;
  depositTracker: PublicKey;
};

export function depositInstruction(p: DepositParams): TransactionInstruction {
  const { amount, recipient, sourceMint } = p;
  return bridgeInstruction(p.programId, [signer(p.depositor), writable(p.depositTracker)], {
    name: 'deposit',
    amount,
    recipient,
    sourceMint,
  });
}

export type WithdrawParams = InstructionArgs<'withdraw'> & {
  programId: PublicKey;
  /** Anyone may sign. */
  signer: PublicKey;
  withdrawTracker: PublicKey;
  tokenAccount: PublicKey;
};

export function withdrawInstruction(p: WithdrawParams): TransactionInstruction {
  return bridgeInstruction(p.programId, [signer(p.signer), writable(p.withdrawTracker), readonly(p.tokenAccount)], {
    name: 'withdraw',
    index: p.index,
  });
}

export type SetTokenPairParams = InstructionArgs<'set_token_pair'> & {
  programId: PublicKey;
  governance: PublicKey;
  withdrawTracker: PublicKey;
  /** The TokenPair PDA of `sourceMint`. */
  tokenPair: PublicKey;
};

export function setTokenPairInstruction(p: SetTokenPairParams): TransactionInstruction {
  const { sourceMint, targetMint, frozen, limitRemaining, vaultBalance } = p;
  return bridgeInstruction(p.programId, [signer(p.governance), writable(p.withdrawTracker), writable(p.tokenPair)], {
    name: 'set_token_pair',
    sourceMint,
    targetMint,
    frozen,
    limitRemaining,
    vaultBalance,
  });
}

export type ResetPendingParams = {
  programId: PublicKey;
  governance: PublicKey;
  depositTracker: PublicKey;
};

export function resetPendingInstruction(p: ResetPendingParams): TransactionInstruction {
  return bridgeInstruction(p.programId, [signer(p.governance), writable(p.depositTracker)], { name: 'reset_pending' });
}
