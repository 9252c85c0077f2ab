import { Keypair, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { ackDepositInstruction, ackWithdrawInstruction, cleanupDepositInstruction } from '../../../src/chain/codec/builders.js';
import { depositInstruction, resetPendingInstruction, setTokenPairInstruction, withdrawInstruction } from '../../../devnet/instructions.js';
import { depositResultToArg, type InstructionArgs } from '../../../src/chain/codec/instructions.js';
import { tokenPairAddress } from '../../../src/chain/pda.js';
import type { DepositResult } from '../../../src/chain/types.js';
import { devnetConnection, submitTransaction } from '../../../devnet/world/submit.js';
import { depositTracker, withdrawTracker } from './chain-state.js';
import type { DevnetBridge } from './devnet-bridge.js';

/**
 * Everyone but the crank, sending real transactions through the devnet's JSON-RPC with the
 * project's instruction builders: the user (deposit, claim), governance (set_token_pair,
 * reset_pending) and a dishonest authority (raw ack_deposit / ack_withdraw).
 */

type Chain = 'source' | 'target';

async function send(
  bridge: DevnetBridge,
  chain: Chain,
  instruction: TransactionInstruction,
  signer: Keypair,
  step: string,
  { skipPreflight = false, commitment = 'confirmed' }: { skipPreflight?: boolean; commitment?: 'confirmed' | 'finalized' } = {},
): Promise<string> {
  // 10 s, and the wait for the finalized bank (32 slots: 0.64 s at the suite's 20 ms, 12.8 s at 400 ms) twice over.
  const bank = bridge.pair[chain].bank;
  const signal = AbortSignal.timeout(10_000 + 2 * bank.commitmentLags.finalizedLagSlots * bank.slotIntervalMs);
  const connection = devnetConnection(bridge.pair[chain].url, signal);
  return submitTransaction(connection, [instruction], [signer], { chain, step, signal, skipPreflight, commitment });
}

export interface DepositArgs {
  amount: bigint;
  sourceMint: string;
  recipient?: string;
}

/**
 * The user's deposit on the source chain, returned once finalized: the server reads the source at
 * finalized by default (BRIDGE_SOURCE_READ_COMMITMENT), so a test's next cycle sees it (at once on
 * a devnet without commitment lags; about 32 slots later with Agave's).
 */
/** Returns once the deposit reaches the bank of `commitment`: by default the finalized one, where the cranks read the source. */
export async function deposit(bridge: DevnetBridge, args: DepositArgs, commitment: 'confirmed' | 'finalized' = 'finalized'): Promise<void> {
  const instruction = depositInstruction({
    programId: bridge.programId,
    depositor: bridge.user.publicKey,
    depositTracker: bridge.depositTracker,
    amount: args.amount,
    recipient: args.recipient ?? Keypair.generate().publicKey.toBase58(),
    sourceMint: args.sourceMint,
  });
  await send(bridge, 'source', instruction, bridge.user, `deposit of ${args.amount}`, { commitment });
}

/** The user claims a Confirmed withdrawal (`withdraw`): created_token_account becomes Created. */
export async function claim(bridge: DevnetBridge, index: number): Promise<void> {
  const instruction = withdrawInstruction({
    programId: bridge.programId,
    signer: bridge.user.publicKey,
    withdrawTracker: bridge.withdrawTracker,
    tokenAccount: Keypair.generate().publicKey,
    index: BigInt(index),
  });
  await send(bridge, 'target', instruction, bridge.user, `withdraw ${index}`);
}

/**
 * The user claims every Confirmed withdrawal whose token account is still Pending, as the
 * confirmed bank shows it: the claim's preflight runs there, and the head may be ahead of it.
 */
export async function claimAll(bridge: DevnetBridge): Promise<void> {
  const { entries } = withdrawTracker(bridge, 'confirmed');
  for (const [index, entry] of entries.entries()) {
    if (entry.status === 'Finalized' && entry.result.kind === 'Confirmed' && entry.createdTokenAccount === 'Pending') await claim(bridge, index);
  }
}

/** The user's own cleanup_deposit (permissionless, rule 3.2), refunding the entry's depositor. */
export async function cleanupDeposit(bridge: DevnetBridge, index: number): Promise<void> {
  const instruction = cleanupDepositInstruction({
    programId: bridge.programId,
    payer: bridge.user.publicKey,
    depositTracker: bridge.depositTracker,
    depositor: new PublicKey(depositTracker(bridge).entries[index]!.depositor),
    index: BigInt(index),
  });
  await send(bridge, 'source', instruction, bridge.user, `cleanup_deposit ${index}`);
}

export interface TokenPairSettings {
  frozen: boolean;
  limitRemaining: bigint;
  vaultBalance: bigint;
}

/** Governance creates or updates a token pair, which removes every non-finalized WithdrawEntry. */
export async function setTokenPair(bridge: DevnetBridge, sourceMint: string, settings: TokenPairSettings): Promise<void> {
  const instruction = setTokenPairInstruction({
    programId: bridge.programId,
    governance: bridge.governance.publicKey,
    withdrawTracker: bridge.withdrawTracker,
    tokenPair: tokenPairAddress(bridge.programId, bridge.world.source.chainId, new PublicKey(sourceMint)),
    sourceMint,
    targetMint: Keypair.generate().publicKey.toBase58(),
    ...settings,
  });
  await send(bridge, 'target', instruction, bridge.governance, `set_token_pair ${sourceMint}`);
}

/** Governance returns every Relaying DepositEntry to Initialized. */
export async function resetPending(bridge: DevnetBridge): Promise<void> {
  const instruction = resetPendingInstruction({
    programId: bridge.programId,
    governance: bridge.governance.publicKey,
    depositTracker: bridge.depositTracker,
  });
  await send(bridge, 'source', instruction, bridge.governance, 'reset_pending');
}

/**
 * Authority k votes ack_deposit with whatever data it likes (a dishonest authority); with
 * `skipPreflight` a vote the program refuses still lands, with an error.
 */
export async function rawAckDeposit(bridge: DevnetBridge, k: number, vote: InstructionArgs<'ack_deposit'>, skipPreflight = false): Promise<void> {
  const authority = bridge.authorities[k]!;
  const instruction = ackDepositInstruction({
    programId: bridge.programId,
    authority: authority.publicKey,
    withdrawTracker: bridge.withdrawTracker,
    tokenPair: tokenPairAddress(bridge.programId, bridge.world.source.chainId, new PublicKey(vote.sourceMint)),
    ...vote,
  });
  await send(bridge, 'target', instruction, authority, `ack_deposit ${vote.index} by authority ${k}`, { skipPreflight });
}

/** Authority k votes ack_withdraw with whatever result it likes (a dishonest authority). */
export async function rawAckWithdraw(
  bridge: DevnetBridge,
  k: number,
  vote: { index: number; approve: boolean; result: DepositResult },
): Promise<void> {
  const authority = bridge.authorities[k]!;
  const instruction = ackWithdrawInstruction({
    programId: bridge.programId,
    authority: authority.publicKey,
    depositTracker: bridge.depositTracker,
    index: BigInt(vote.index),
    approve: vote.approve,
    result: depositResultToArg(vote.result),
  });
  await send(bridge, 'source', instruction, authority, `ack_withdraw ${vote.index} by authority ${k}`);
}
