import type { PublicKey } from '@solana/web3.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import type { AuthorityChainView, AuthorityView } from '../bridge-chains.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import type { AuthorityHistory } from './authority-history.js';

/**
 * The authority's own accounts on both chains, read concurrently: its fee balance (also
 * published as bridge_authority_balance_lamports) and what its key signed since the previous
 * read. Read at confirmed, like the vote positions.
 */

export interface AuthorityReadContext {
  authority: PublicKey;
  metrics: Metrics;
  source: { rpc: ChainRpc; history: AuthorityHistory };
  target: { rpc: ChainRpc; history: AuthorityHistory };
}

export async function readAuthorityView(ctx: AuthorityReadContext, signal: AbortSignal): Promise<AuthorityView> {
  const [source, target] = await Promise.all([readChain(ctx, 'source', signal), readChain(ctx, 'target', signal)]);
  return { source, target };
}

async function readChain(ctx: AuthorityReadContext, chain: ChainSide, signal: AbortSignal): Promise<AuthorityChainView> {
  const { rpc, history } = ctx[chain];
  const [balance, { transactions, complete }] = await Promise.all([rpc.getBalance(ctx.authority, 'confirmed', signal), history.readNew(signal)]);
  ctx.metrics.authorityBalance.set({ chain }, balance);
  return { balance, transactions, ...(complete ? {} : { historyIncomplete: true }) };
}
