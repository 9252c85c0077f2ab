import type { PublicKey } from '@solana/web3.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import type { AuthorityChainView, AuthorityView } from '../bridge-chains.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import type { AuthorityHistory } from './authority-history.js';
import type { NoncePool } from './nonce-pool.js';

/**
 * The authority's own accounts on both chains, read concurrently: its fee balance (also
 * published as bridge_authority_balance_lamports) and what its key signed since the previous
 * read: from its nonces (the moves of another signer the pool's reads found, no extra call)
 * and from its history. Read at confirmed, like the vote positions.
 */

export interface AuthorityReadContext {
  authority: PublicKey;
  metrics: Metrics;
  source: { rpc: ChainRpc; history: AuthorityHistory; nonces: NoncePool };
  target: { rpc: ChainRpc; history: AuthorityHistory; nonces: NoncePool };
}

export async function readAuthorityView(ctx: AuthorityReadContext, signal: AbortSignal): Promise<AuthorityView> {
  const [source, target] = await Promise.all([readChain(ctx, 'source', signal), readChain(ctx, 'target', signal)]);
  // Last, once nothing can fail: each move is reported once.
  return { source: withNonceMoves(source, ctx.source.nonces), target: withNonceMoves(target, ctx.target.nonces) };
}

async function readChain(ctx: AuthorityReadContext, chain: ChainSide, signal: AbortSignal): Promise<AuthorityChainView> {
  const { rpc, history } = ctx[chain];
  const [balance, { transactions, complete }] = await Promise.all([rpc.getBalance(ctx.authority, 'confirmed', signal), history.readNew(signal)]);
  ctx.metrics.authorityBalance.set({ chain }, balance);
  return { balance, transactions, ...(complete ? {} : { historyIncomplete: true }) };
}

function withNonceMoves(view: AuthorityChainView, nonces: NoncePool): AuthorityChainView {
  const nonceMoves = nonces.moves.drain();
  return nonceMoves.length === 0 ? view : { ...view, nonceMoves };
}
