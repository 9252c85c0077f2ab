import type { PublicKey } from '@solana/web3.js';
import type { Logger } from '../../log/logger.js';
import type { AuthorityTransaction } from '../bridge-chains.js';
import { isHistoryUnavailable, type ChainRpc } from '../rpc/chain-rpc.js';
import { mapBounded } from './concurrency.js';

/**
 * Which transactions signed by the authority key landed on one chain since the previous read,
 * and which of them this process signed: the facts second-signer detection decides on
 * (docs/chain-client.md, "Authority history").
 *
 * Rule for what came before this process: the first read only records the newest transaction
 * that lists the authority (its baseline, read at `minContextSlot` = the newest slot the chain
 * client has seen, so no older view) and reports nothing. Later reads report what landed
 * after the previous read's newest (`until`), so a restarted server never flags the
 * transactions of its own previous life, and nothing is reported twice.
 *
 * One view per read: every page is asked at `minContextSlot` = the slot of `until` (a node
 * that has not reached it refuses, and the read goes to another endpoint), and an entry older
 * than that slot proves the node answering does not know `until` (a lagging or pruned node
 * then lists the whole history): the read is dropped and made again at the next cycle, never
 * taken as "everything is new".
 *
 * History is optional: without it on any endpoint of the chain (JSON-RPC -32011) a read reports
 * nothing and the pool says once that second-signer detection is off (src/chain/rpc/endpoint-pool.ts).
 *
 * Cost per read and chain: one getSignaturesForAddress of at most HISTORY_PAGE_LIMIT entries
 * when nothing new landed; at most HISTORY_MAX_PAGES pages when much did, plus one
 * getTransaction per new entry this process did not sign (a transaction that lists the
 * authority without its signature, such as a transfer that funds it, is not the key's use),
 * for the newest HISTORY_MAX_LOOKUPS of them, HISTORY_LOOKUP_CONCURRENCY at a time. Anyone can
 * list the authority in a transaction (send it lamports): the cap keeps such traffic from
 * making every cycle's read long; what is left unchecked is logged.
 */

export const HISTORY_PAGE_LIMIT = 20;
export const HISTORY_MAX_PAGES = 5;
export const HISTORY_MAX_LOOKUPS = 8;
export const HISTORY_LOOKUP_CONCURRENCY = 4;

/** Sequential rounds of read calls in one read: the pages, then the lookups. */
export const HISTORY_READ_ROUNDS = HISTORY_MAX_PAGES + Math.ceil(HISTORY_MAX_LOOKUPS / HISTORY_LOOKUP_CONCURRENCY);

/**
 * Signatures this process signed, per chain: the most recent MAX_SIGNED_KEPT. A transaction
 * can land only while its blockhash is valid (150 blocks, about a minute) and the next read
 * sees it, so only the last few cycles' signatures matter; a cycle signs at most a few dozen.
 */
export const MAX_SIGNED_KEPT = 10_000;

export class SignedSignatures {
  readonly #signatures = new Set<string>();

  add(signature: string): void {
    this.#signatures.add(signature);
    if (this.#signatures.size > MAX_SIGNED_KEPT) this.#signatures.delete(this.#signatures.values().next().value as string);
  }

  has(signature: string): boolean {
    return this.#signatures.has(signature);
  }
}

export class AuthorityHistory {
  readonly #rpc: ChainRpc;
  readonly #authority: PublicKey;
  readonly #signed: SignedSignatures;
  readonly #logger: Logger;
  /** The newest transaction already accounted for; undefined before the first read, null when the address had no history. */
  #newest: { signature: string; slot: number } | null | undefined;

  constructor(options: { rpc: ChainRpc; authority: PublicKey; signed: SignedSignatures; logger: Logger }) {
    this.#rpc = options.rpc;
    this.#authority = options.authority;
    this.#signed = options.signed;
    this.#logger = options.logger;
  }

  /** Transactions signed by the authority key that landed since the previous read, newest first. */
  async readNew(signal: AbortSignal): Promise<AuthorityTransaction[]> {
    try {
      return await this.#read(signal);
    } catch (err) {
      // No endpoint keeps history: nothing can be checked (the pool has said so once).
      if (isHistoryUnavailable(err)) return [];
      throw err;
    }
  }

  async #read(signal: AbortSignal): Promise<AuthorityTransaction[]> {
    if (this.#newest === undefined) {
      // At least as new as anything this process has read on the chain: a lagging node's older
      // baseline would let the previous life's last transactions count as another signer's.
      const floor = this.#rpc.newestSlotSeen();
      const options = { limit: 1, ...(floor === undefined ? {} : { minContextSlot: floor }) };
      const [newest] = await this.#rpc.getSignaturesForAddress(this.#authority, options, signal);
      this.#newest = newest === undefined ? null : { signature: newest.signature, slot: newest.slot };
      return [];
    }
    const listed = await this.#listedSince(this.#newest, signal);
    if (listed === undefined) return [];
    const unknown = listed.filter(({ signature }) => !this.#signed.has(signature));
    const checked = unknown.slice(0, HISTORY_MAX_LOOKUPS);
    if (unknown.length > checked.length) {
      this.#logger.warn(
        { chain: this.#rpc.chain, checked: checked.length, unchecked: unknown.length - checked.length },
        `${unknown.length} new transactions list the authority without being signed here; only the newest ${checked.length} are checked for a second signer`,
      );
    }
    const foreign = await mapBounded(checked, HISTORY_LOOKUP_CONCURRENCY, signal, (one, lookupSignal) =>
      this.#signedByAuthority(one.signature, lookupSignal),
    );
    const foreignSignatures = new Set(checked.filter((_, i) => foreign[i]).map((one) => one.signature));
    const transactions: AuthorityTransaction[] = listed
      .filter(({ signature }) => this.#signed.has(signature) || foreignSignatures.has(signature))
      .map(({ signature, slot }) => ({ signature, slot, signedHere: this.#signed.has(signature) }));
    // Only once every entry is accounted for: a failed read is read again in full.
    if (listed.length > 0) this.#newest = { signature: listed[0]!.signature, slot: listed[0]!.slot };
    return transactions;
  }

  /** What landed after `until`, newest first; undefined when the node answering did not know `until` (look again later). */
  async #listedSince(until: { signature: string; slot: number } | null, signal: AbortSignal): Promise<Array<{ signature: string; slot: number }> | undefined> {
    const listed: Array<{ signature: string; slot: number }> = [];
    const bound = until === null ? {} : { until: until.signature, minContextSlot: until.slot };
    let before: string | undefined;
    for (let page = 0; page < HISTORY_MAX_PAGES; page++) {
      const options = { limit: HISTORY_PAGE_LIMIT, ...bound, ...(before === undefined ? {} : { before }) };
      const batch = await this.#rpc.getSignaturesForAddress(this.#authority, options, signal);
      if (until !== null && batch.some(({ slot }) => slot < until.slot)) {
        this.#logger.debug({ chain: this.#rpc.chain, until: until.signature, untilSlot: until.slot }, 'the node answering does not know the previous read\'s newest transaction; read again next cycle');
        return undefined;
      }
      listed.push(...batch);
      if (batch.length < HISTORY_PAGE_LIMIT) return listed;
      before = batch.at(-1)!.signature;
    }
    this.#logger.warn(
      { chain: this.#rpc.chain, checked: listed.length },
      `more than ${listed.length} transactions listed the authority since the previous read; older ones are not checked for a second signer`,
    );
    return listed;
  }

  async #signedByAuthority(signature: string, signal: AbortSignal): Promise<boolean> {
    const signers = await this.#rpc.getTransactionSigners(signature, signal);
    return signers?.includes(this.#authority.toBase58()) ?? false;
  }
}
