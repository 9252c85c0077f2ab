import type { Logger } from '../../../log/logger.js';
import type { NonceMove } from '../../port/bridge-chains.js';

/**
 * Who moved each nonce of one chain's pool (docs/chain-client.md, "Who signs, from the nonces").
 * A nonce account moves only with its authority's signature, and a value never comes back, so
 * every move from a value V is one transaction the key signed against V. It is this process's
 * when one of its versions signed against V landed; while a version of its own against V may
 * still land, the move waits for the sender's verdict; otherwise another process signed with
 * the key: a foreign move, reported at the next authority read.
 *
 * The first value this process sees of an account is excused once: its previous life may have
 * left a version in flight against it (restart recovery signs against the same value), so the
 * move away from it proves nothing. Reads from an older view (a lower slot) than the last one
 * are ignored: a lagging endpoint shows an older value, not a move. A view's slot is one node's
 * word: it counts only up to the chain's slot floor (two answers agreed on it; every read
 * carries it, so no answer is older than it), so one inflated slot cannot hide every later move.
 *
 * Bounds: per account, the value last seen and an entry per value with a version of this
 * process's in flight or landed (at most one per pending transaction of the chain, pruned once
 * the value is behind); at most MAX_MOVES_KEPT foreign moves wait for the next read, the oldest
 * dropped first (each still counted as dropped in the log line).
 */

export const MAX_MOVES_KEPT = 64;

interface Seen {
  nonce: string;
  slot: number;
  /** The first value this process saw of the account. */
  first: boolean;
  /** The values it held before, newest last (at most MAX_VALUES_LEFT): a view showing one is older, whatever its slot. */
  left: string[];
}

/** Values an account left that are remembered: a lagging view is seconds old, a few moves at most. */
const MAX_VALUES_LEFT = 8;

interface Own {
  /** Pending transactions signed against this value whose outcome is not known. */
  live: number;
  landed: boolean;
}

export class NonceMoves {
  readonly #seen = new Map<string, Seen>();
  readonly #own = new Map<string, Own>();
  /** Moves from a value with a version of this process's in flight: decided when the sender knows. */
  readonly #waiting = new Map<string, { account: string; from: Seen; to: { nonce: string; slot: number } }>();
  #moves: NonceMove[] = [];

  constructor(private readonly logger: Logger) {}

  /** A read of `account` at `slot` found `nonce`; `floor` is the chain's slot floor when the read was made. */
  observe(account: string, nonce: string, slot: number, floor?: number): void {
    const last = this.#seen.get(account);
    if (last !== undefined && (isOlder(slot, last.slot, floor) || nonce === last.nonce || last.left.includes(nonce))) {
      if (slot > last.slot && nonce === last.nonce) last.slot = slot;
      return;
    }
    const left = last === undefined ? [] : [...last.left, last.nonce].slice(-MAX_VALUES_LEFT);
    this.#seen.set(account, { nonce, slot, first: last === undefined, left });
    if (last !== undefined) this.#judge(account, last, { nonce, slot });
    this.#prune(account);
  }

  /** A transaction of this process, signed against `nonce` of `account`, may land from now on. */
  sent(account: string, nonce: string): void {
    const own = this.#ownOf(account, nonce);
    own.live += 1;
  }

  /** That transaction's outcome is known: one of its versions landed (with an error or not), or none ever can. */
  settled(account: string, nonce: string, landed: boolean): void {
    const own = this.#ownOf(account, nonce);
    if (landed) own.landed = true;
    else own.live = Math.max(0, own.live - 1);
    const key = keyOf(account, nonce);
    const waiting = this.#waiting.get(key);
    if (waiting !== undefined && (own.landed || own.live === 0)) {
      this.#waiting.delete(key);
      this.#decide(waiting.account, waiting.from, waiting.to, own.landed);
    }
    this.#prune(account);
  }

  /** The foreign moves found since the previous call, oldest first. */
  drain(): NonceMove[] {
    const moves = this.#moves;
    this.#moves = [];
    return moves;
  }

  #judge(account: string, from: Seen, to: { nonce: string; slot: number }): void {
    const own = this.#own.get(keyOf(account, from.nonce));
    if (own !== undefined && !own.landed && own.live > 0) {
      this.#waiting.set(keyOf(account, from.nonce), { account, from, to });
      return;
    }
    this.#decide(account, from, to, own?.landed === true);
  }

  #decide(account: string, from: Seen, to: { nonce: string; slot: number }, ours: boolean): void {
    this.#own.delete(keyOf(account, from.nonce));
    if (ours) return;
    const move: NonceMove = { account, from: from.nonce, to: to.nonce, slot: to.slot };
    if (from.first) {
      this.logger.info(
        move,
        "a nonce moved from the value this process first saw without a transaction of its own: its previous life's, or another signer's; not counted",
      );
      return;
    }
    this.#moves.push(move);
    if (this.#moves.length > MAX_MOVES_KEPT) {
      const [dropped] = this.#moves.splice(0, 1);
      this.logger.warn({ dropped }, `more than ${MAX_MOVES_KEPT} foreign nonce moves between two authority reads: the oldest is dropped`);
    }
  }

  #ownOf(account: string, nonce: string): Own {
    const key = keyOf(account, nonce);
    let own = this.#own.get(key);
    if (own === undefined) {
      own = { live: 0, landed: false };
      this.#own.set(key, own);
    }
    return own;
  }

  // A value behind the account's current one, with nothing in flight and no move waiting on it, is done with.
  #prune(account: string): void {
    const current = this.#seen.get(account)?.nonce;
    for (const [key, own] of this.#own) {
      if (!key.startsWith(`${account}:`) || key === keyOf(account, current ?? '') || own.live > 0 || this.#waiting.has(key)) continue;
      this.#own.delete(key);
    }
  }
}

/** Whether a view at `slot` is older than one at `last`, as far as the floor corroborates `last` (undefined: no floor yet). */
function isOlder(slot: number, last: number, floor: number | undefined): boolean {
  return slot < (floor === undefined ? last : Math.min(last, floor));
}

function keyOf(account: string, nonce: string): string {
  return `${account}:${nonce}`;
}
