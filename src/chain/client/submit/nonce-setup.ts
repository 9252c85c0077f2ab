import bs58 from 'bs58';
import type { PublicKey } from '@solana/web3.js';
import { type ChainSide, chainName } from '../../../domain.js';
import { BridgeError } from '../../../errors.js';
import { sleep } from '../../../time.js';
import type { AuthoritySigner } from '../../../signer/authority-signer.js';
import { LAMPORTS_PER_SIGNATURE } from '../../fee-rate.js';
import {
  isFundedOnly,
  NONCE_ACCOUNT_RENT_LAMPORTS,
  nonceAccountState,
  nonceAddress,
  nonceSetupInstructions,
  rentExemptLamports,
} from '../../nonce-account.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import type { AccountData } from '../../rpc/rpc-answers.js';
import { signTransaction } from './build/sign-transaction.js';

/**
 * `npm run ops -- nonce init` on one chain, in two steps: a plan from reads alone (what is
 * there, what setting up the rest costs, whether the authority can pay it), then its execution.
 * Accounts that are already this authority's nonce accounts are left alone (the command is
 * idempotent); an address that holds lamports but no data (anyone can fund any address first) is
 * set up all the same; an account at a pool address that is something else stops the plan with
 * the address and why. Each account to set up is one transaction the authority signs and pays
 * (the rent-exempt minimum less what the address holds, plus the fee), confirmed before the next
 * is sent.
 */

/** Between status polls of a setting-up transaction. */
const POLL_INTERVAL_MS = 500;

/** One setting-up transaction is waited for at most this long: a blockhash's life (150 blocks at up to 600 ms) and a margin. */
export const CONFIRM_TIMEOUT_MS = 120_000;

/** The authority's own account (no data) must stay rent-exempt after it paid: a payer left below it is refused (InsufficientFundsForRent). */
const AUTHORITY_RENT_LAMPORTS = rentExemptLamports(0);

/** One pool address as the plan found it: this authority's nonce account, nothing, or lamports someone sent there. */
interface NonceAccountPlan {
  address: string;
  position: number;
  state: 'present' | 'missing' | 'funded';
  /** Lamports the address holds now. */
  lamports: number;
  /** What the authority transfers to it: the rent-exempt minimum less what it holds (0 when present or already enough). */
  topUpLamports: number;
}

export interface NoncePoolPlan {
  chain: ChainSide;
  chainId: number;
  accounts: NonceAccountPlan[];
  /** The authority's balance on this chain when planned. */
  authorityLamports: number;
  /** The setting-up transactions' fees (one signature each, no priority fee). */
  feeLamports: number;
  /** Top-ups and fees: what the authority pays on this chain. */
  payLamports: number;
}

interface NonceAccountLine {
  address: string;
  /** `created` by this run, or `present` before it. */
  state: 'created' | 'present';
  /** The setting-up transaction, when created. */
  signature?: string;
}

export interface NoncePoolSetup {
  chain: ChainSide;
  accounts: NonceAccountLine[];
  /** Lamports of rent this run put into new accounts (returned when an account is closed). */
  rentLamports: number;
}

export interface NonceSetupInput {
  rpc: ChainRpc;
  authority: PublicKey;
  /** This chain's id: the seeds name it. */
  chainId: number;
  /** BRIDGE_NONCE_ACCOUNTS. */
  size: number;
}

export async function planNoncePool({ rpc, authority, chainId, size }: NonceSetupInput, signal: AbortSignal): Promise<NoncePoolPlan> {
  const accounts: NonceAccountPlan[] = [];
  for (let position = 0; position < size; position++) {
    const address = nonceAddress(authority, chainId, position);
    const { account } = await rpc.getAccountInfo(address, { commitment: 'confirmed' }, signal);
    accounts.push(planOne(rpc.chain, address, position, account, authority));
  }
  const toSetUp = accounts.filter((account) => account.state !== 'present');
  const feeLamports = toSetUp.length * LAMPORTS_PER_SIGNATURE;
  const payLamports = feeLamports + toSetUp.reduce((sum, account) => sum + account.topUpLamports, 0);
  const authorityLamports = size === 0 ? 0 : await rpc.getBalance(authority, 'confirmed', signal);
  return { chain: rpc.chain, chainId, accounts, authorityLamports, feeLamports, payLamports };
}

function planOne(chain: ChainSide, address: PublicKey, position: number, account: AccountData, authority: PublicKey): NonceAccountPlan {
  const line = { address: address.toBase58(), position, lamports: account?.lamports ?? 0 };
  if (account === null) return { ...line, state: 'missing', topUpLamports: NONCE_ACCOUNT_RENT_LAMPORTS };
  if (isFundedOnly(account)) return { ...line, state: 'funded', topUpLamports: Math.max(0, NONCE_ACCOUNT_RENT_LAMPORTS - line.lamports) };
  const state = nonceAccountState(account, authority);
  if (state.kind === 'ready') return { ...line, state: 'present', topUpLamports: 0 };
  const reason = `nonce account ${line.address} on the ${chainName(chain)} chain is unusable: ${state.kind === 'unusable' ? state.reason : 'unreadable'}`;
  throw new BridgeError('CHAIN__MALFORMED_ACCOUNT', { account: line.address, field: 'nonce account', reason });
}

/**
 * The lamports the authority needs on the chain before the plan runs: what it pays plus its own
 * rent-exempt minimum (an account may not be left between 0 and that). 0 when nothing is paid.
 */
export function neededLamports(plan: NoncePoolPlan): number {
  return plan.payLamports === 0 ? 0 : plan.payLamports + AUTHORITY_RENT_LAMPORTS;
}

/** Runs a plan: each account to set up in one transaction, confirmed before the next. */
export async function setUpNoncePool(rpc: ChainRpc, signer: AuthoritySigner, plan: NoncePoolPlan, signal: AbortSignal): Promise<NoncePoolSetup> {
  const accounts: NonceAccountLine[] = [];
  let rentLamports = 0;
  for (const account of plan.accounts) {
    if (account.state === 'present') {
      accounts.push({ address: account.address, state: 'present' });
      continue;
    }
    const signature = await setUpOne(rpc, signer, plan.chainId, account, signal);
    accounts.push({ address: account.address, state: 'created', signature });
    rentLamports += account.topUpLamports;
  }
  return { chain: rpc.chain, accounts, rentLamports };
}

async function setUpOne(rpc: ChainRpc, signer: AuthoritySigner, chainId: number, account: NonceAccountPlan, signal: AbortSignal): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await rpc.getLatestBlockhash('confirmed', signal);
  const instructions = nonceSetupInstructions(signer.publicKey, chainId, account.position, account.topUpLamports);
  const { wire, signature } = await signTransaction(signer, instructions, blockhash, lastValidBlockHeight);
  const encoded = bs58.encode(signature);
  await rpc.sendTransaction(wire, { skipPreflight: false, preflightCommitment: 'confirmed' }, signal);
  const deadline = Date.now() + CONFIRM_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const { status } = await rpc.getSignatureStatus(encoded, { searchTransactionHistory: false }, signal);
    if (status !== null && status.err !== null) throw notCreated(rpc.chain, encoded, `it landed with ${JSON.stringify(status.err)}`);
    if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') return encoded;
    await sleep(POLL_INTERVAL_MS, signal);
  }
  throw notCreated(rpc.chain, encoded, `not confirmed within ${CONFIRM_TIMEOUT_MS / 1000} s; run the command again (it skips what exists)`);
}

function notCreated(chain: ChainSide, signature: string, reason: string): BridgeError<'CHAIN__RPC_FAILED'> {
  const what = `creating a nonce account on the ${chainName(chain)} chain (transaction ${signature})`;
  return new BridgeError('CHAIN__RPC_FAILED', { chain, method: 'sendTransaction', kind: 'unexpected' }, { what, reason });
}
