import { Registry } from 'prom-client';
import { endpointsOptions, setUpNoncePools } from '../chain/client/index.js';
import type { NoncePoolSetup } from '../chain/client/nonce-setup.js';
import { chainName } from '../chain/chain-name.js';
import { NONCE_ACCOUNT_RENT_LAMPORTS } from '../chain/nonce-account.js';
import { createMetrics } from '../metrics/metrics.js';
import type { OpsContext } from './context.js';

/**
 * `npm run ops -- nonce init`: creates the authority's missing nonce accounts on both chains
 * (BRIDGE_NONCE_ACCOUNTS per chain; docs/chain-client.md "Landing once: durable nonces") and
 * prints what each costs; run again, it creates nothing and says so.
 */
export async function nonceInit(ctx: OpsContext, signal: AbortSignal): Promise<{ json: object; text: string }> {
  const pools = await setUpNoncePools(endpointsOptions(ctx.crank, createMetrics(new Registry())), ctx.key, ctx.crank.nonceAccounts, signal);
  const json = { authority: ctx.authority.toBase58(), rent_lamports_per_account: NONCE_ACCOUNT_RENT_LAMPORTS, chains: pools };
  return { json, text: pools.map(renderPool).join('\n') };
}

function renderPool({ chain, accounts, rentLamports }: NoncePoolSetup): string {
  const name = chainName(chain);
  if (accounts.length === 0) return `${name} chain: BRIDGE_NONCE_ACCOUNTS is 0: no nonce accounts, blockhash mode`;
  const lines = accounts.map(({ address, state, signature }) => `  ${address} ${state === 'created' ? `created (transaction ${signature})` : 'already there'}`);
  const created = accounts.filter((account) => account.state === 'created').length;
  const cost =
    created === 0
      ? 'nothing created, nothing paid'
      : `${created} created: ${rentLamports} lamports of rent (${NONCE_ACCOUNT_RENT_LAMPORTS} each, returned if an account is closed) plus one transaction fee each`;
  return [`${name} chain: ${accounts.length} nonce accounts; ${cost}`, ...lines].join('\n');
}
