import type { PublicKey } from '@solana/web3.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import type { AuthorityChainView, AuthorityView } from '../port/bridge-chains.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import type { AuthorityHistory } from './read/authority-history.js';
import type { MoveProofs } from './nonce/move-proofs.js';
import type { NoncePool } from './nonce/nonce-pool.js';
import type { RecentValues } from './read/signer-evidence.js';

/**
 * The authority's own accounts on both chains, read concurrently: its fee balance (also
 * published as bridge_authority_balance_lamports) and what its key signed since the previous
 * read, from its history, each transaction of another signer proven (./read/signer-evidence.ts) and
 * carrying the move of the pool's nonces it made (./nonce/move-proofs.ts). The RecentBlockhashes
 * sysvar is read first: what makes a transaction new. Read at confirmed, like the vote positions.
 */

interface AuthorityChainContext {
  rpc: ChainRpc;
  history: AuthorityHistory;
  nonces: NoncePool;
  proofs: MoveProofs;
  recent: RecentValues;
}

export interface AuthorityReadContext {
  authority: PublicKey;
  metrics: Metrics;
  logger: Logger;
  source: AuthorityChainContext;
  target: AuthorityChainContext;
}

export async function readAuthorityView(ctx: AuthorityReadContext, signal: AbortSignal): Promise<AuthorityView> {
  const [source, target] = await Promise.all([readChain(ctx, 'source', signal), readChain(ctx, 'target', signal)]);
  return { source, target };
}

async function readChain(ctx: AuthorityReadContext, chain: ChainSide, signal: AbortSignal): Promise<AuthorityChainView> {
  const { rpc, nonces, proofs } = ctx[chain];
  const [balance, { transactions, complete }] = await Promise.all([
    rpc.getBalance(ctx.authority, 'confirmed', signal),
    readHistory(ctx, chain, signal),
  ]);
  ctx.metrics.authorityBalance.set({ chain }, balance);
  // Last, once nothing can fail: each move is judged once.
  const proven = await proofs.judge(nonces.moves.drain(), transactions, signal);
  return {
    balance,
    transactions: proven.transactions,
    ...(proven.nonceMoves.length === 0 ? {} : { nonceMoves: proven.nonceMoves }),
    ...(complete ? {} : { historyIncomplete: true }),
  };
}

async function readHistory(ctx: AuthorityReadContext, chain: ChainSide, signal: AbortSignal): ReturnType<AuthorityHistory['readNew']> {
  const { rpc, history, recent } = ctx[chain];
  try {
    await recent.readRecentBlockhashes(rpc, signal);
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    // Without them a new transaction of another signer is judged not new: unverified, never a halt.
    ctx.logger.warn(
      { err, chain },
      'the RecentBlockhashes sysvar could not be read: history entries of this read can only count as unverified evidence',
    );
  }
  return history.readNew(signal);
}
