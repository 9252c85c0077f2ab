import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import type { AuthorityTransaction, NonceMove } from '../bridge-chains.js';
import type { HistoryTransaction } from './authority-history.js';
import { MAX_MOVES_KEPT } from './nonce-moves.js';
import { moveKey } from './signer-evidence.js';

/**
 * A nonce move the pool's reads saw without a transaction of this process is a report, not a
 * proof (docs/chain-client.md, "Who signs: proof, not reports"): one node can show a value that
 * never existed. It proves a second signer only with the transaction that made it: one the key's
 * history lists, whose signatures verify, that advances that account from the value this process
 * saw (./authority-history.ts). That transaction is the second signer the read reports, carrying
 * the move; the move itself is never counted twice.
 *
 * A move waits MOVE_PROOF_READS authority reads for its transaction (a history node may list
 * it a read later than the pool's read saw the move); one still without it is counted in
 * bridge_signer_evidence_unverified_total with a warn line: no halt, no stand-down.
 *
 * Bounds: at most MAX_MOVES_KEPT moves wait (NonceMoves keeps no more between reads), and the
 * last MAX_PROVEN_KEPT proven (account, value) pairs are remembered for a move seen after its
 * transaction was listed.
 */

export const MOVE_PROOF_READS = 2;
const MAX_PROVEN_KEPT = 256;

interface Waiting {
  move: NonceMove;
  reads: number;
}

export class MoveProofs {
  #waiting: Waiting[] = [];
  readonly #proven = new Set<string>();

  constructor(private readonly options: { chain: ChainSide; metrics: Metrics; logger: Logger }) {}

  /**
   * One authority read: `moves` the pool's reads saw since the previous one, `transactions` the
   * history's. Returns the transactions, each foreign one carrying the move it proves.
   */
  judge(moves: readonly NonceMove[], transactions: readonly HistoryTransaction[]): AuthorityTransaction[] {
    for (const { advanced } of transactions) if (advanced !== undefined) this.#remember(moveKey(advanced.account, advanced.from));
    this.#waiting.push(...moves.map((move) => ({ move, reads: 0 })));
    this.#waiting = this.#waiting.slice(-MAX_MOVES_KEPT);
    const byKey = new Map(this.#waiting.map((waiting) => [moveKey(waiting.move.account, waiting.move.from), waiting]));
    const proven = transactions.map(({ advanced, ...transaction }) => {
      const waiting = advanced === undefined ? undefined : byKey.get(moveKey(advanced.account, advanced.from));
      return waiting === undefined ? transaction : { ...transaction, nonceMove: waiting.move };
    });
    const unproven: NonceMove[] = [];
    this.#waiting = this.#waiting.filter((waiting) => {
      if (this.#proven.has(moveKey(waiting.move.account, waiting.move.from))) return false;
      waiting.reads += 1;
      if (waiting.reads < MOVE_PROOF_READS) return true;
      unproven.push(waiting.move);
      return false;
    });
    this.#sayUnproven(unproven);
    return proven;
  }

  #remember(key: string): void {
    this.#proven.add(key);
    if (this.#proven.size > MAX_PROVEN_KEPT) this.#proven.delete(this.#proven.values().next().value as string);
  }

  #sayUnproven(moves: readonly NonceMove[]): void {
    if (moves.length === 0) return;
    const { chain, metrics, logger } = this.options;
    metrics.signerEvidenceUnverified.inc({ chain }, moves.length);
    logger.warn(
      { chain, moves },
      `${moves.length} nonce account(s) of this key moved without a transaction of this server, and no verified transaction of the key that made the move was found ` +
        `in ${MOVE_PROOF_READS} reads of its history: not proof of a second signer (a node may report values that never existed, or no endpoint keeps history); not counted as one`,
    );
  }
}
