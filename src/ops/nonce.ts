import { Registry } from 'prom-client';
import { endpointsOptions } from '../chain/client/chain-endpoints.js';
import { createNoncePools } from '../chain/client/operator-chains.js';
import { neededLamports, type NoncePoolPlan, type NoncePoolSetup } from '../chain/client/submit/nonce-setup.js';
import { chainName } from '../domain.js';
import { NONCE_ACCOUNT_RENT_LAMPORTS } from '../chain/nonce-account.js';
import { BridgeError } from '../errors.js';
import { createMetrics } from '../metrics/metrics.js';
import type { OpsContext } from './context.js';

/**
 * `npm run ops -- nonce init`: sets up the authority's missing nonce accounts on both chains
 * (BRIDGE_NONCE_ACCOUNTS per chain; docs/chain-client.md "Landing once: durable nonces"). Before
 * anything is paid: the configuration is checked as `ops status` checks it (both trackers read
 * at the configured program ids and chain ids: a wrong BRIDGE_SOURCE_CHAIN_ID is refused), the
 * plan is made from reads (what is there, what each chain costs), the authority's balance is
 * checked against it, and the plan is shown and confirmed (`--yes`; `--dry-run` shows it and
 * sends nothing). Run again, it sets up nothing and says so.
 */

/** Asks the operator on a terminal; false for anything but yes. */
export type Confirm = (question: string) => Promise<boolean>;

export interface NonceInitOptions {
  /** --yes: pay without asking. */
  yes: boolean;
  /** --dry-run: show the plan, send nothing. */
  dryRun: boolean;
  /** How to ask; undefined when stdin is not a terminal (then only --yes pays). */
  confirm: Confirm | undefined;
  /** Prints the plan before the question (human output only). */
  show(text: string): void;
  /** Bounds the reads that make the plan (the CLI's COMMAND_TIMEOUT_MS); the question and the sends have bounds of their own. */
  readTimeoutMs: number;
}

export interface NonceInitResult {
  json: object;
  text: string;
}

export async function nonceInit(ctx: OpsContext, options: NonceInitOptions, signal: AbortSignal): Promise<NonceInitResult> {
  const endpoints = endpointsOptions(ctx.crank, createMetrics(new Registry()));
  const reads = AbortSignal.any([signal, AbortSignal.timeout(options.readTimeoutMs)]);
  // The trackers at the configured program ids and chain ids, as `ops status` reads them: a wrong setting fails here.
  await ctx.reads.readRange(0, 0, reads);
  const pools = createNoncePools(endpoints);
  const plans = await pools.plan(ctx.authority, ctx.crank.nonceAccounts, reads);
  for (const plan of plans) checkFunded(ctx.authority.toBase58(), plan);
  const authority = ctx.authority.toBase58();
  const paying = plans.reduce((sum, plan) => sum + plan.payLamports, 0);
  const planJson = { authority, rent_lamports_per_account: NONCE_ACCOUNT_RENT_LAMPORTS, pay_lamports: paying, plans };
  const planText = plans.map(renderPlan).join('\n');
  if (options.dryRun) return { json: { ...planJson, dry_run: true }, text: `${planText}\n--dry-run: nothing sent` };
  if (paying > 0 && !options.yes) await confirmed(options, planText, `pay ${paying} lamports from authority ${authority}`);
  const chains = await pools.setUp(ctx.key, plans, signal);
  return { json: { ...planJson, chains }, text: chains.map(renderSetup).join('\n') };
}

async function confirmed(options: NonceInitOptions, planText: string, what: string): Promise<void> {
  options.show(planText);
  if (options.confirm === undefined) {
    const line = `nonce init would ${what}; stdin is not a terminal, so it cannot ask: pass --yes to pay without asking (--dry-run shows the plan); nothing sent`;
    throw new BridgeError('CONFIG__INVALID', { problems: [line] });
  }
  if (!(await options.confirm(`${what}? [y/N] `))) throw new BridgeError('CONFIG__INVALID', { problems: ['nonce init not confirmed: nothing sent'] });
}

function checkFunded(authority: string, plan: NoncePoolPlan): void {
  const needed = neededLamports(plan);
  if (plan.authorityLamports >= needed) return;
  throw new BridgeError('CHAIN__INSUFFICIENT_FUNDS', {
    authority,
    chain: plan.chain,
    chainId: plan.chainId,
    lamports: plan.authorityLamports,
    needed,
    paying: plan.payLamports,
  });
}

function renderPlan(plan: NoncePoolPlan): string {
  const head = `${chainName(plan.chain)} chain (id ${plan.chainId})`;
  if (plan.accounts.length === 0) return `${head}: BRIDGE_NONCE_ACCOUNTS is 0: no nonce accounts, blockhash mode`;
  const toSetUp = plan.accounts.filter((account) => account.state !== 'present').length;
  const cost =
    toSetUp === 0
      ? 'nothing created, nothing paid'
      : `${toSetUp} to set up: pays ${plan.payLamports} lamports (${plan.payLamports - plan.feeLamports} of rent: ${NONCE_ACCOUNT_RENT_LAMPORTS} an account, less what its address ` +
        `already holds, returned if an account is closed; ${plan.feeLamports} of fees); the authority holds ${plan.authorityLamports}`;
  const lines = plan.accounts.map((account) => {
    if (account.state === 'present') return `  ${account.address} already there`;
    if (account.state === 'missing') return `  ${account.address} to create`;
    return `  ${account.address} holds ${account.lamports} lamports someone sent: to set up (allocate, top up ${account.topUpLamports}, initialize)`;
  });
  return [`${head}: ${plan.accounts.length} nonce accounts; ${cost}`, ...lines].join('\n');
}

function renderSetup({ chain, accounts, rentLamports }: NoncePoolSetup): string {
  const name = chainName(chain);
  if (accounts.length === 0) return `${name} chain: BRIDGE_NONCE_ACCOUNTS is 0: no nonce accounts, blockhash mode`;
  const lines = accounts.map(
    ({ address, state, signature }) => `  ${address} ${state === 'created' ? `created (transaction ${signature})` : 'already there'}`,
  );
  const created = accounts.filter((account) => account.state === 'created').length;
  const cost =
    created === 0
      ? 'nothing created, nothing paid'
      : `${created} created: ${rentLamports} lamports of rent (returned if an account is closed) plus one transaction fee each`;
  return [`${name} chain: ${accounts.length} nonce accounts; ${cost}`, ...lines].join('\n');
}
