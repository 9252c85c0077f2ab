import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { signer, writable, readonly, bridgeInstruction } from '../src/chain/codec/builders.js';
import type { InstructionArgs, InstructionOf } from '../src/chain/codec/instructions.js';

/**
 * The bridge program's other instructions, with PROTOCOL.md's account lists: tracker set-up,
 * users' deposit and withdraw, governance's set_token_pair and reset_pending. The devnet's
 * world, traffic and the tests use them; the server sends only the crank's three
 * (src/chain/codec/builders.ts).
 */

/**
 * initialize_deposit_tracker (source) or initialize_withdraw_tracker (destination): the same
 * accounts and arguments, but for the other chain's id.
 */
export type InitializeTrackerParams = (InstructionOf<'initialize_deposit_tracker'> | InstructionOf<'initialize_withdraw_tracker'>) & {
  programId: PublicKey;
  /** Signs and becomes the tracker's governance. */
  governance: PublicKey;
  tracker: PublicKey;
};

export function initializeTrackerInstruction(p: InitializeTrackerParams): TransactionInstruction {
  const { programId, governance, tracker, ...ix } = p;
  return bridgeInstruction(programId, [signer(governance), writable(tracker)], ix);
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
