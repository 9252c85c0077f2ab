import type { ChainPair } from '../../devnet/chain-pair.js';
import type { LandingPosition } from '../../devnet/bank/history.js';
import type { World } from '../../devnet/world/bootstrap.js';
import type { ChainSide } from '../../src/domain.js';
import { decodeBridgeTransaction } from '../support/sent-transactions.js';

/**
 * What each authority landed, read from the ledger while the soak runs: every transaction it
 * landed on either chain is counted (with or without an error) and decoded, and a vote
 * (authority, action, generation, index) carried by two landed transactions landed twice. A
 * governance change (set_token_pair on the destination, reset_pending on the source) adds 1 to its
 * tracker's generation and rewinds every authority, so the same index is then rightly voted on
 * again: a vote's generation is the number of governance changes that landed on its chain before
 * it (every landed transaction has a slot of its own on the devnet, so the order is exact). The servers are
 * separate processes, so what they sent is only seen on chain. The devnet keeps the history of
 * the last 10,000 transactions per chain, so the watch reads new landings every few seconds
 * (an end-of-run count would miss the evicted ones); a landing it could no longer decode is
 * counted as uninspected, never as clean.
 */

export interface AuthorityLandings {
  landed: number;
  landedWithError: number;
  /** Lamports of priority fee the landed transactions paid (price x requested limit). */
  priorityLamports: bigint;
  /** Votes landed more than once, counted once per extra landing. */
  duplicateVotes: number;
  uninspected: number;
}

export interface GovernanceLanding {
  chain: ChainSide;
  slot: number;
  /** When the watch first saw it (within one poll of its landing). */
  seenAtMs: number;
}

export interface VoteWatch {
  /** Reads what landed since the previous poll. */
  poll(): void;
  totals(): AuthorityLandings[];
  /** Governance changes that landed without an error, oldest first. */
  governance(): readonly GovernanceLanding[];
}

const CHAINS = ['source', 'target'] as const;

/** A bound before every transaction of `slot` (those of earlier slots are not watched). */
function startOf(slot: number): LandingPosition {
  return { slot, seq: -1 };
}

/**
 * The newest landing position of `address` on `chain` (a block holds several transactions: what
 * landed earlier in the open slot, the authorities' funding among it, is before the watch), or
 * the start of the open slot when it has none.
 */
function newestOf(pair: ChainPair, chain: ChainSide, address: string | { toBase58(): string }): { slot: number; seq: number } {
  const key = typeof address === 'string' ? address : address.toBase58();
  const [newest] = pair[chain].bank.at('processed').signaturesForAddress(key, { limit: 1 });
  return newest === undefined ? startOf(pair[chain].slot) : { slot: newest.slot, seq: newest.seq };
}

/** Counts from the current landing positions on: what landed before the call is not the servers'. */
export function watchVotes(pair: ChainPair, world: World): VoteWatch {
  const authorities = world.authorities.map(({ publicKey }) => ({
    publicKey,
    votes: new Map<string, number>(),
    counts: { landed: 0, landedWithError: 0, uninspected: 0, priorityLamports: 0n },
    until: { source: newestOf(pair, 'source', publicKey), target: newestOf(pair, 'target', publicKey) },
  }));
  const governance = {
    publicKey: world.governance.publicKey,
    until: { source: newestOf(pair, 'source', world.governance.publicKey), target: newestOf(pair, 'target', world.governance.publicKey) },
  };
  const governanceLandings: GovernanceLanding[] = [];
  const generationAt = (chain: ChainSide, slot: number) =>
    governanceLandings.filter((landing) => landing.chain === chain && landing.slot < slot).length;
  const pollGovernance = () => {
    for (const chain of CHAINS) {
      const landed = pair[chain].bank
        .at('processed')
        .signaturesForAddress(governance.publicKey, { until: governance.until[chain], limit: Number.MAX_SAFE_INTEGER });
      for (const { slot, seq, err } of landed.reverse()) {
        governance.until[chain] = { slot, seq };
        if (err === null) governanceLandings.push({ chain, slot, seenAtMs: Date.now() });
      }
    }
  };
  const poll = () => {
    // Governance first: a vote read in this poll may have landed after a change read in it.
    pollGovernance();
    for (const authority of authorities) {
      for (const chain of CHAINS) {
        const { bank, programId } = pair[chain];
        const landed = bank
          .at('processed')
          .signaturesForAddress(authority.publicKey, { until: authority.until[chain], limit: Number.MAX_SAFE_INTEGER });
        if (landed.length > 0) authority.until[chain] = { slot: landed[0]!.slot, seq: landed[0]!.seq };
        for (const { signature, slot, err } of landed) {
          authority.counts.landed += 1;
          if (err !== null) authority.counts.landedWithError += 1;
          const transaction = bank.transaction(signature);
          if (transaction === undefined) {
            authority.counts.uninspected += 1;
            continue;
          }
          authority.counts.priorityLamports += transaction.priorityFee;
          const carried = decodeBridgeTransaction(transaction.wire, programId);
          if (carried === undefined || carried.action === 'cleanup_deposit') continue;
          for (const index of carried.indices) {
            const vote = `${carried.action}:${generationAt(chain, slot)}:${index}`;
            authority.votes.set(vote, (authority.votes.get(vote) ?? 0) + 1);
          }
        }
      }
    }
  };
  return {
    poll,
    totals: () =>
      authorities.map(({ votes, counts }) => ({
        ...counts,
        duplicateVotes: [...votes.values()].reduce((sum, times) => sum + times - 1, 0),
      })),
    governance: () => [...governanceLandings],
  };
}
