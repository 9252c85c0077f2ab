import { PublicKey } from '@solana/web3.js';
import { decodeTokenPair, encodeTokenPair } from '../../src/chain/codec/accounts.js';
import { tokenPairAddress } from '../../src/chain/pda.js';
import type { DepositResult, TokenPair, WithdrawEntry } from '../../src/chain/types.js';
import { isBridgeError } from '../../src/errors.js';
import type { InstructionContext } from './context.js';

/**
 * The result of a WithdrawEntry at finalization, from that entry's own TokenPair
 * (PROTOCOL.md ack_deposit). A Confirmed result consumes limit and vault.
 */
export function settleWithTokenPair(ctx: InstructionContext, sourceChainId: number, entry: WithdrawEntry): DepositResult {
  const address = tokenPairAddress(ctx.programId, sourceChainId, new PublicKey(entry.sourceMint)).toBase58();
  const pair = readTokenPair(ctx, address);
  if (pair === 'missing') return { kind: 'Rejected', reason: 'TokenPairNotFound' };
  if (pair === 'unreadable') return { kind: 'Rejected', reason: 'InternalError' };
  if (pair.frozen) return { kind: 'Rejected', reason: 'TokenPairFrozen' };
  if (pair.limitRemaining === 0n) return { kind: 'Rejected', reason: 'LimitExceeded' };
  // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min refuses
  const confirmed = entry.amount < pair.limitRemaining ? entry.amount : pair.limitRemaining;
  if (pair.vaultBalance < confirmed) return { kind: 'Rejected', reason: 'InsufficientFunds' };
  const updated: TokenPair = {
    ...pair,
    limitRemaining: pair.limitRemaining - confirmed,
    vaultBalance: pair.vaultBalance - confirmed,
  };
  ctx.store.writeData(address, 0, encodeTokenPair(updated));
  return { kind: 'Confirmed', amount: confirmed };
}

function readTokenPair(ctx: InstructionContext, address: string): TokenPair | 'missing' | 'unreadable' {
  const account = ctx.store.get(address);
  if (account === undefined || account.owner !== ctx.programId.toBase58()) return 'missing';
  try {
    return decodeTokenPair(account.data, address);
  } catch (err) {
    // The program only ever writes valid pairs; an unreadable one is the program's own fault.
    if (isBridgeError(err)) return 'unreadable';
    throw err;
  }
}
