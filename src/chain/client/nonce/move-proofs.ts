import { PublicKey } from '@solana/web3.js';
import type { Logger } from '../../../log/logger.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { AuthorityTransaction, NonceMove } from '../../port/bridge-chains.js';
import { nonceAccountState } from '../../nonce-account.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import type { HistoryTransaction } from '../read/authority-history.js';
import { MAX_MOVES_KEPT } from './nonce-moves.js';
import { moveKey } from '../read/signer-evidence.js';

/**
 * A nonce move the pool's reads saw without a transaction of this process is a report, not a
 * proof (docs/chain-client.md, "Who signs: proof, not reports"): one node can show a value that
 * never existed. It proves a second signer in one of two ways:
 *
 * - its transaction: one the key's history lists, whose signatures verify, that advances that
 *   account from the value this process saw (../read/authority-history.ts). That transaction is the
 *   second signer the read reports, carrying the move;
 * - a second endpoint: both values of the move are held by at least two endpoints. At the read
 *   after a move was seen without its transaction, its account is read on every endpoint in
 *   service, and the value two of them hold is remembered as held; a move from a held value to
 *   a held value is reported on its own (`nonceMoves`), and its transaction, if the history
 *   lists it later, is not reported again. A move from a value only one node showed (a forged
 *   one) is never corroborated, whatever comes after it. Without history a twin is so caught
 *   from its third move (the first is excused, the second's `from` is not held yet).
 *
 * A move without proof after MOVE_PROOF_READS authority reads (a history node may list its
 * transaction a read later than the pool's read saw it) is counted in
 * bridge_signer_evidence_unverified_total with a warn line: no halt, no stand-down.
 *
 * Bounds: at most MAX_MOVES_KEPT moves wait (NonceMoves keeps no more between reads); at most
 * MAX_CORROBORATIONS accounts a read are read on every endpoint (one getAccountInfo per
 * endpoint each); MAX_KEPT proven moves and held values are remembered, the oldest forgotten.
 */

export const MOVE_PROOF_READS = 2;
const MAX_CORROBORATIONS = 4;
const MAX_KEPT = 256;
const CORROBORATING_ENDPOINTS = 2;

interface Waiting {
  move: NonceMove;
  reads: number;
}

export interface ProvenUses {
  transactions: AuthorityTransaction[];
  /** Moves two endpoints corroborated, without a transaction of the history (yet). */
  nonceMoves: NonceMove[];
}

export class MoveProofs {
  #waiting: Waiting[] = [];
  /** Moves proven by a transaction of the history. */
  readonly #proven = new Set<string>();
  /** Moves proven by two endpoints and reported as such: their transaction, listed later, is not reported again. */
  readonly #corroborated = new Set<string>();
  /** (account, value) pairs two endpoints held. */
  readonly #held = new Set<string>();

  constructor(private readonly options: { rpc: ChainRpc; authority: PublicKey; metrics: Metrics; logger: Logger }) {}

  /**
   * One authority read: `moves` the pool's reads saw since the previous one, `transactions` the
   * history's. Returns the transactions, each foreign one carrying the move it proves, and the
   * moves two endpoints corroborated.
   */
  async judge(moves: readonly NonceMove[], transactions: readonly HistoryTransaction[], signal: AbortSignal): Promise<ProvenUses> {
    for (const { advanced } of transactions) if (advanced !== undefined) remember(this.#proven, moveKey(advanced.account, advanced.from));
    this.#waiting.push(...moves.map((move) => ({ move, reads: 0 })));
    this.#waiting = this.#waiting.slice(-MAX_MOVES_KEPT);
    const byKey = new Map(this.#waiting.map((waiting) => [keyOf(waiting.move), waiting]));
    const proven = transactions.flatMap(({ advanced, ...transaction }) => {
      const key = advanced === undefined ? undefined : moveKey(advanced.account, advanced.from);
      if (key !== undefined && this.#corroborated.has(key)) return [];
      const waiting = key === undefined ? undefined : byKey.get(key);
      return [waiting === undefined ? transaction : { ...transaction, nonceMove: waiting.move }];
    });
    this.#waiting = this.#waiting.filter((waiting) => !this.#proven.has(keyOf(waiting.move)));
    const nonceMoves = await this.#corroborate(signal);
    const unproven: NonceMove[] = [];
    this.#waiting = this.#waiting.filter((waiting) => {
      waiting.reads += 1;
      if (waiting.reads < MOVE_PROOF_READS) return true;
      unproven.push(waiting.move);
      return false;
    });
    this.#sayUnproven(unproven);
    return { transactions: proven, nonceMoves };
  }

  /** Reads the accounts of the moves seen since the previous read on every endpoint; returns the moves now corroborated. */
  async #corroborate(signal: AbortSignal): Promise<NonceMove[]> {
    const accounts = [...new Set(this.#waiting.filter((waiting) => waiting.reads === 0).map((waiting) => waiting.move.account))].slice(
      -MAX_CORROBORATIONS,
    );
    for (const account of accounts) {
      const views = await this.options.rpc.getAccountInfoEverywhere(new PublicKey(account), 'confirmed', signal);
      const holders = new Map<string, Set<string>>();
      for (const { account: data, endpoint } of views) {
        const state = nonceAccountState(data, this.options.authority);
        if (state.kind === 'ready') holders.set(state.nonce, (holders.get(state.nonce) ?? new Set()).add(endpoint));
      }
      for (const [value, endpoints] of holders) if (endpoints.size >= CORROBORATING_ENDPOINTS) remember(this.#held, moveKey(account, value));
    }
    const corroborated = this.#waiting
      .map((waiting) => waiting.move)
      .filter((move) => this.#held.has(moveKey(move.account, move.from)) && this.#held.has(moveKey(move.account, move.to)));
    for (const move of corroborated) remember(this.#corroborated, keyOf(move));
    this.#waiting = this.#waiting.filter((waiting) => !this.#corroborated.has(keyOf(waiting.move)));
    return corroborated;
  }

  #sayUnproven(moves: readonly NonceMove[]): void {
    if (moves.length === 0) return;
    const { rpc, metrics, logger } = this.options;
    metrics.signerEvidenceUnverified.inc({ chain: rpc.chain }, moves.length);
    logger.warn(
      { chain: rpc.chain, moves },
      `${moves.length} nonce account(s) of this key moved without a transaction of this server, and neither a verified transaction of the key that made the move ` +
        `(in ${MOVE_PROOF_READS} reads of its history) nor two endpoints holding both its values prove it: not proof of a second signer ` +
        '(a node may report values that never existed, or no endpoint keeps history); not counted as one',
    );
  }
}

function keyOf(move: NonceMove): string {
  return moveKey(move.account, move.from);
}

function remember(set: Set<string>, key: string): void {
  set.add(key);
  if (set.size > MAX_KEPT) set.delete(set.values().next().value as string);
}
