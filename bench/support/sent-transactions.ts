import { Transaction, type PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { RpcFetch } from '../../src/chain/rpc/rpc-fetch.js';
import { decodeInstructionData } from '../../src/chain/codec/instructions.js';
import type { ChainSide } from '../../src/domain.js';
import { baseFeesPaid, pairLamports, type PairLamports } from '../../test/support/base-fees.js';
import type { BenchWorld } from './bench-world.js';
import { nextIndexOf, readTrackers, votesRecordedBy } from './ledger.js';

/**
 * Every transaction a crank sent, seen on its way out, then judged by the chain: which
 * signatures the ledger holds, with or without an error. That is what the duplicate-vote check
 * counts: a vote (authority, action, index) carried by two landed transactions landed twice,
 * whatever the crank believes. The fees each authority paid close the loop: the devnet charges
 * every landed transaction, so fees beyond the landed signatures seen here mean a transaction
 * landed that this record missed.
 *
 * The fetch forwards every request unchanged to the global fetch (production's path); it only
 * decodes sendTransaction bodies on the side, and tells `beforeSend` (fault injection) which
 * chain a send is for.
 */

export type SentAction = 'ack_deposit' | 'ack_withdraw' | 'cleanup_deposit';
const ACTIONS: readonly SentAction[] = ['ack_deposit', 'ack_withdraw', 'cleanup_deposit'];

interface SentTransaction {
  chain: ChainSide;
  action: SentAction;
  indices: number[];
}

export interface SentRecord {
  /** Pass as BridgeChainsTuning.fetch. */
  fetch: RpcFetch;
  /** Distinct signatures by what they carry; rebroadcasts of the same bytes count once. */
  transactions: ReadonlyMap<string, SentTransaction>;
}

export function recordSentTransactions(bench: BenchWorld, beforeSend: (chain: ChainSide) => void = () => undefined): SentRecord {
  const transactions = new Map<string, SentTransaction>();
  // By origin: the configuration normalizes each RPC URL (a trailing slash), the devnet names it without.
  const sourceOrigin = new URL(bench.pair.source.url).origin;
  const chainOf = (url: string): ChainSide => (new URL(url).origin === sourceOrigin ? 'source' : 'target');
  const fetch: RpcFetch = (input, init) => {
    const body = typeof init?.body === 'string' ? init.body : undefined;
    if (body?.includes('"sendTransaction"')) {
      const chain = chainOf(String(input));
      const sent = decodeSend(body, bench.programId);
      if (sent !== undefined && !transactions.has(sent.signature)) {
        transactions.set(sent.signature, { chain, action: sent.action, indices: sent.indices });
      }
      beforeSend(chain);
    }
    return globalThis.fetch(input, init);
  };
  return { fetch, transactions };
}

function decodeSend(body: string, programId: PublicKey): BridgeTransaction | undefined {
  const request = JSON.parse(body) as { method?: string; params?: unknown[] };
  const wire = request.method === 'sendTransaction' ? request.params?.[0] : undefined;
  return typeof wire === 'string' ? decodeBridgeTransaction(Buffer.from(wire, 'base64'), programId) : undefined;
}

export interface BridgeTransaction {
  signature: string;
  action: SentAction;
  /** The tracker index each of its bridge instructions names. */
  indices: number[];
}

/** What a transaction's wire bytes carry for the bridge program, or undefined when it carries no crank action. */
export function decodeBridgeTransaction(wire: Uint8Array, programId: PublicKey): BridgeTransaction | undefined {
  const transaction = Transaction.from(wire);
  const signature = transaction.signature;
  const decoded = transaction.instructions
    .filter((instruction) => instruction.programId.equals(programId))
    .map((instruction) => decodeInstructionData(instruction.data));
  const first = decoded[0];
  if (signature === null || first === undefined || !ACTIONS.includes(first.name as SentAction)) return undefined;
  const indices = decoded.map((instruction) => ('index' in instruction ? Number(instruction.index) : Number.NaN));
  return { signature: bs58.encode(signature), action: first.name as SentAction, indices };
}

interface ActionCount {
  /** Transactions that landed without an error. */
  landed: number;
  /** Transactions that landed with an error: fee paid, nothing changed. */
  landedFailed: number;
  /** Instructions (votes or cleanups) in the transactions that landed without an error. */
  instructions: number;
}

export interface AuthorityAccount {
  slot: number;
  byAction: Record<SentAction, ActionCount>;
  /** Signatures sent that never landed (dropped, expired, refused in preflight). */
  neverLanded: number;
  /** Votes carried by more than one landed transaction (counted once per extra landing). */
  duplicateVotes: number;
  /** Votes recorded on chain in the trackers' vote masks, per tracker. */
  votesOnChain: { ackDeposit: number; ackWithdraw: number };
  /** Own next_index on each tracker at the end. */
  positions: { deposits: number; withdrawals: number };
  /** Landed transactions according to the fees paid on both chains. */
  feeTransactions: number;
  /** Problems the checks found; empty when everything adds up. */
  problems: string[];
}

/**
 * Judges authority `slot`'s sent transactions (`record` must be its crank's alone) against the
 * chain; `startLamports` is its balance on both chains before its crank started.
 */
export function accountAuthority(bench: BenchWorld, record: SentRecord, slot: number, startLamports: PairLamports): AuthorityAccount {
  const key = bench.authorities[slot]!.publicKey.toBase58();
  const byAction = Object.fromEntries(ACTIONS.map((action) => [action, { landed: 0, landedFailed: 0, instructions: 0 }])) as Record<
    SentAction,
    ActionCount
  >;
  const landings = new Map<string, number>();
  let neverLanded = 0;
  for (const [signature, sent] of record.transactions) {
    const status = bench.pair[sent.chain].bank.signatureStatus(signature);
    if (status === undefined) {
      neverLanded += 1;
      continue;
    }
    const count = byAction[sent.action];
    if (status.err !== null) count.landedFailed += 1;
    else {
      count.landed += 1;
      count.instructions += sent.indices.length;
    }
    if (sent.action !== 'cleanup_deposit') {
      for (const index of sent.indices) landings.set(`${sent.action}:${index}`, (landings.get(`${sent.action}:${index}`) ?? 0) + 1);
    }
  }
  const duplicateVotes = [...landings.values()].reduce((sum, times) => sum + times - 1, 0);
  const trackers = readTrackers(bench);
  const votesOnChain = { ackDeposit: votesRecordedBy(trackers.withdrawals, key), ackWithdraw: votesRecordedBy(trackers.deposits, key) };
  const positions = { deposits: nextIndexOf(trackers.deposits, key), withdrawals: nextIndexOf(trackers.withdrawals, key) };
  const feeTransactions = baseFeesPaid(bench.pair, key, startLamports);
  const landedTotal = ACTIONS.reduce((sum, action) => sum + byAction[action].landed + byAction[action].landedFailed, 0);
  const problems = checkProblems(slot, { byAction, duplicateVotes, votesOnChain, feeTransactions, landedTotal });
  return { slot, byAction, neverLanded, duplicateVotes, votesOnChain, positions, feeTransactions, problems };
}

export function authorityLamports(bench: BenchWorld, slot: number): PairLamports {
  return pairLamports(bench.pair, bench.authorities[slot]!.publicKey);
}

function checkProblems(
  slot: number,
  facts: Pick<AuthorityAccount, 'byAction' | 'duplicateVotes' | 'votesOnChain' | 'feeTransactions'> & { landedTotal: number },
): string[] {
  const problems: string[] = [];
  const who = `authority ${slot}`;
  if (facts.duplicateVotes > 0) problems.push(`${who}: ${facts.duplicateVotes} vote(s) landed in more than one transaction`);
  if (facts.feeTransactions !== facts.landedTotal) {
    problems.push(`${who}: paid fees for ${facts.feeTransactions} transactions but ${facts.landedTotal} of the ones it sent landed`);
  }
  const votes = [
    ['ack_deposit', facts.byAction.ack_deposit.instructions, facts.votesOnChain.ackDeposit],
    ['ack_withdraw', facts.byAction.ack_withdraw.instructions, facts.votesOnChain.ackWithdraw],
  ] as const;
  for (const [action, landed, onChain] of votes) {
    if (landed !== onChain) problems.push(`${who}: ${landed} ${action} votes landed but ${onChain} are recorded on chain`);
  }
  return problems;
}
