import bs58 from 'bs58';
import type { ChainSide } from '../../domain.js';
import { BridgeError } from '../../errors.js';
import { sleep } from '../../time.js';
import type { AuthoritySigner } from '../authority-signer.js';
import { chainName } from '../chain-name.js';
import { createNonceInstructions, NONCE_ACCOUNT_RENT_LAMPORTS, nonceAccountState, nonceAddress } from '../nonce-account.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import { signTransaction } from './sign-transaction.js';

/**
 * `npm run ops -- nonce init` on one chain: the authority's nonce pool made whole. Accounts
 * that are already this authority's nonce accounts are left alone (the command is idempotent);
 * an account at a pool address that is something else stops it with the address and why; each
 * missing one is created and initialized in one transaction the authority signs and pays
 * (NONCE_ACCOUNT_RENT_LAMPORTS of rent, plus the fee), confirmed before the next is sent.
 */

/** Between status polls of a creating transaction. */
const POLL_INTERVAL_MS = 500;

/** One creating transaction is waited for at most this long: a blockhash's life (150 blocks at up to 600 ms) and a margin. */
const CONFIRM_TIMEOUT_MS = 120_000;

interface NonceAccountLine {
  address: string;
  /** `created` by this run, or `present` before it. */
  state: 'created' | 'present';
  /** The creating transaction, when created. */
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
  signer: AuthoritySigner;
  /** This chain's id: the seeds name it. */
  chainId: number;
  /** BRIDGE_NONCE_ACCOUNTS. */
  size: number;
}

export async function setUpNoncePool({ rpc, signer, chainId, size }: NonceSetupInput, signal: AbortSignal): Promise<NoncePoolSetup> {
  const authority = signer.publicKey;
  const accounts: NonceAccountLine[] = [];
  for (let position = 0; position < size; position++) {
    const address = nonceAddress(authority, chainId, position);
    const { account } = await rpc.getAccountInfo(address, { commitment: 'confirmed' }, signal);
    const state = nonceAccountState(account, authority);
    if (state.kind === 'unusable') {
      const reason = `nonce account ${address.toBase58()} on the ${chainName(rpc.chain)} chain is unusable: ${state.reason}`;
      throw new BridgeError('CHAIN__MALFORMED_ACCOUNT', { account: address.toBase58(), field: 'nonce account', reason });
    }
    if (state.kind === 'ready') {
      accounts.push({ address: address.toBase58(), state: 'present' });
      continue;
    }
    const signature = await createOne({ rpc, signer, chainId, size }, position, signal);
    accounts.push({ address: address.toBase58(), state: 'created', signature });
  }
  const created = accounts.filter((line) => line.state === 'created').length;
  return { chain: rpc.chain, accounts, rentLamports: created * NONCE_ACCOUNT_RENT_LAMPORTS };
}

async function createOne({ rpc, signer, chainId }: NonceSetupInput, position: number, signal: AbortSignal): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await rpc.getLatestBlockhash('confirmed', signal);
  const { wire, signature } = await signTransaction(signer, createNonceInstructions(signer.publicKey, chainId, position), blockhash, lastValidBlockHeight);
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
