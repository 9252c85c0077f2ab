import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Logger } from '../../../log/logger.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { AuthorityTransaction } from '../../port/bridge-chains.js';
import { ed25519PublicKeyObject, verifiesEd25519 } from '../../../signer/ed25519.js';
import { isLeaseOperation } from '../../lease-account.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import type { TransactionSignatures } from '../../rpc/rpc-answers.js';
import { isHistoryUnavailable } from '../../rpc/rpc-failure.js';
import { mapBounded } from './concurrency.js';
import { messageFacts, type RecentValues } from './signer-evidence.js';
import { MAX_SIGNED_KEPT, type SignedSignatures } from './signed-signatures.js';

/**
 * Which transactions signed by the authority key landed on one chain since the previous read,
 * and which of them this process signed: the history, second-signer detection's second signal
 * after the nonces (docs/chain-client.md, "Authority history").
 *
 * Nothing a history node says is taken on its word: every listed entry this process did not
 * sign is fetched, and it counts only if its id is its fee payer's signature and that signature
 * verifies against its message (ed25519); it is a second signer's only if the authority is one
 * of its required signers and the authority's signature verifies too. An entry that fails (a
 * forged listing) is ignored, counted once in bridge_history_unverified_total and remembered,
 * so it is neither fetched nor counted again; one the node cannot produce (null) is ignored and
 * remembered alike, uncounted (a pruned node, an airdrop on the devnet).
 * A verified entry proves a second signer only when it is new (./signer-evidence.ts): its
 * blockhash or nonce value is one this process saw, and it is not one the baseline read listed;
 * a replayed old one is `stale`: counted in bridge_signer_evidence_unverified_total, a warn line,
 * remembered, never the cursor. One that only creates, funds, initializes, withdraws or
 * re-authorizes this key's nonce accounts is the operator's (`npm run ops -- nonce init`, or
 * closing one by hand): `operator`, an info line, not foreign.
 * Only a verified entry (or one this process signed) becomes the cursor (`until`) of the next
 * read: a forged one never makes every later read unanswerable.
 *
 * No unchecked tail: a read lists everything since the cursor (at most HISTORY_MAX_PAGES pages
 * of HISTORY_PAGE_LIMIT) and checks it oldest first, at most HISTORY_MAX_LOOKUPS lookups per
 * read; the cursor stops at the last entry checked, so what the bound left is the next read's,
 * and a read that could not check everything says so (`complete: false`: unknown, never "no
 * other signer"). Traffic that merely lists the authority (transfers to it, ~10 a second) costs
 * lookups but cannot hide a transaction the key signed.
 *
 * Rule for what came before this process: the first read only finds the newest verified
 * transaction that lists the authority (its baseline, read at the chain's slot floor) and reports nothing, so a restarted server never flags its own
 * previous life's transactions, and nothing is reported twice.
 *
 * One view per read: every page is asked at `minContextSlot` = the slot of `until` (at most the
 * chain's slot floor: an entry's slot is one node's word), and an entry older than that proves
 * the node answering does not know `until`: the read is dropped and made again at the next
 * cycle, never taken as "everything is new". A read that fails is incomplete, never a failed cycle.
 *
 * History is optional: without it on any endpoint of the chain (JSON-RPC -32011) a read reports
 * nothing and the pool says once that the check is off (src/chain/rpc/endpoint-pool.ts).
 */

// 500 entries of about 160 bytes each stay well inside one answer's bound (MAX_RESPONSE_BYTES).
export const HISTORY_PAGE_LIMIT = 500;
export const HISTORY_MAX_PAGES = 5;
export const HISTORY_MAX_LOOKUPS = 64;
export const HISTORY_LOOKUP_CONCURRENCY = 32;

/** Sequential rounds of read calls in one read: the pages, then the lookups. */
export const HISTORY_READ_ROUNDS = HISTORY_MAX_PAGES + Math.ceil(HISTORY_MAX_LOOKUPS / HISTORY_LOOKUP_CONCURRENCY);

/** A transaction signed by the key; a foreign durable-nonce one says what it advanced. */
export interface HistoryTransaction extends AuthorityTransaction {
  /** The nonce account it advanced and the value it advanced from. */
  advanced?: { account: string; from: string };
}

/** What one read found. */
export interface HistoryRead {
  /** Signed by the authority key, landed since the previous read, newest first. */
  transactions: HistoryTransaction[];
  /** False when the bounds left entries unchecked: whether another key signed in them is unknown. */
  complete: boolean;
}

/**
 * A listed entry, checked: `own` this process signed it; `foreign` the key signed it elsewhere,
 * new; `operator` the key signed it to set up its own nonce pool; `stale` the key signed it but
 * it is not new (a replay); `listed` it names the key without its signature; `missing` the node
 * cannot produce it (an airdrop on the devnet, a pruned node); `unverified` its signatures do
 * not match.
 */
type Verdict = 'own' | 'foreign' | 'operator' | 'stale' | 'listed' | 'missing' | 'unverified';

/** Verdicts never looked up again. */
type Ignored = 'missing' | 'unverified' | 'stale';

interface Checked {
  verdict: Verdict;
  /** A foreign durable-nonce transaction: the account it advanced and the value it advanced from. */
  advanced?: { account: string; from: string };
}

interface Listed {
  signature: string;
  slot: number;
}

const NOTHING: HistoryRead = { transactions: [], complete: true };
const INCOMPLETE: HistoryRead = { transactions: [], complete: false };

export class AuthorityHistory {
  readonly #rpc: ChainRpc;
  readonly #authority: PublicKey;
  readonly #signed: SignedSignatures;
  readonly #metrics: Metrics;
  readonly #logger: Logger;
  /** Entries found unverified or missing, never looked up again. */
  readonly #ignored = new Map<string, Ignored>();
  readonly #recent: RecentValues;
  readonly #poolAddresses: ReadonlySet<string>;
  /** The baseline read's entries: landed before this process's first read, never new. */
  readonly #beforeBaseline = new Set<string>();
  /** The newest entry accounted for; undefined before the baseline is found, null when the address had no verified history. */
  #cursor: Listed | null | undefined;
  /** While looking for the baseline: the oldest entry of a page found all unverified, to list past. */
  #baselineBefore: string | undefined;
  /** The signing lease's address on this chain, if it has one: another instance's lease operations are not a second signer's votes. */
  readonly #lease: PublicKey | undefined;

  constructor(options: {
    rpc: ChainRpc;
    authority: PublicKey;
    signed: SignedSignatures;
    /** Blockhashes and nonce values this process saw: what makes an entry new. */
    recent: RecentValues;
    /** Every address of this key's nonce pool on the chain (./signer-evidence.ts `poolAddressSet`). */
    poolAddresses: ReadonlySet<string>;
    metrics: Metrics;
    logger: Logger;
    /** The signing lease's address (src/chain/lease-account.ts): its operations are no vote. */
    lease?: PublicKey;
  }) {
    this.#recent = options.recent;
    this.#poolAddresses = options.poolAddresses;
    this.#rpc = options.rpc;
    this.#lease = options.lease;
    this.#authority = options.authority;
    this.#signed = options.signed;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
  }

  /**
   * Transactions signed by the authority key that landed since the previous read, newest first.
   * A read that fails never fails the cycle: whether another key signed is then unknown
   * (`complete: false`), as after a read the bounds cut short, and the next read looks again.
   */
  async readNew(signal: AbortSignal): Promise<HistoryRead> {
    try {
      return await this.#read(signal);
    } catch (err) {
      if (signal.aborted) throw err;
      // No endpoint keeps history: nothing can be checked (the pool has said so once).
      if (isHistoryUnavailable(err)) return NOTHING;
      this.#logger.warn(
        { chain: this.#rpc.chain, err },
        'the authority history could not be read: whether another key signed since the previous read is unknown until the next read',
      );
      return INCOMPLETE;
    }
  }

  async #read(signal: AbortSignal): Promise<HistoryRead> {
    if (this.#cursor === undefined) {
      await this.#findBaseline(signal);
      // Still none: the newest entries did not verify, and what came after them is unknown.
      return this.#cursor === undefined ? INCOMPLETE : NOTHING;
    }
    const listing = await this.#listedSince(this.#cursor, signal);
    if (listing === undefined) return NOTHING;
    const oldestFirst = [...listing.entries].reverse();
    const verdicts = await this.#check(oldestFirst, HISTORY_MAX_LOOKUPS, signal);
    const transactions: HistoryTransaction[] = [];
    let checked = 0;
    for (const entry of oldestFirst) {
      const checkedEntry = verdicts.get(entry.signature);
      if (checkedEntry === undefined) break;
      checked += 1;
      const { verdict, advanced } = checkedEntry;
      if (isIgnored(verdict)) continue;
      this.#cursor = { signature: entry.signature, slot: entry.slot };
      if (verdict === 'own' || verdict === 'foreign') {
        transactions.unshift({
          signature: entry.signature,
          slot: entry.slot,
          signedHere: verdict === 'own',
          ...(advanced === undefined ? {} : { advanced }),
        });
      }
    }
    const complete = !listing.truncated && checked === oldestFirst.length;
    if (listing.truncated) {
      this.#logger.warn(
        { chain: this.#rpc.chain, listed: oldestFirst.length },
        `more than ${oldestFirst.length} transactions listed the authority since the previous read; the older ones were not listed: whether another key signed among them is unknown`,
      );
    }
    if (checked < oldestFirst.length) {
      this.#logger.warn(
        { chain: this.#rpc.chain, checked, unchecked: oldestFirst.length - checked },
        `${oldestFirst.length} transactions listed the authority since the previous read; the oldest ${checked} are checked, the rest at the next read (${HISTORY_MAX_LOOKUPS} lookups per read): whether another key signed is unknown until then`,
      );
    }
    return { transactions, complete };
  }

  /**
   * The baseline: the newest entry that verifies, from one page. Until one does (the newest are
   * all forged, more than one round of lookups) there is none and the next read looks again,
   * past the ones found forged (a page found all forged is passed with `before`); a listing of
   * nothing real is no history at all.
   */
  async #findBaseline(signal: AbortSignal): Promise<void> {
    // The chain client asks it at the chain's slot floor (two answers agreed on it): a lagging
    // node's older baseline would let the previous life's last transactions count as another
    // signer's, and one node's inflated slot must not make the baseline unreadable.
    const options = { limit: HISTORY_PAGE_LIMIT, ...(this.#baselineBefore === undefined ? {} : { before: this.#baselineBefore }) };
    const page = (await this.#rpc.getSignaturesForAddress(this.#authority, options, signal)).map(({ signature, slot }) => ({ signature, slot }));
    for (const { signature } of page) this.#beforeBaseline.add(signature);
    // One round of lookups: only the newest verified entry matters.
    const verdicts = await this.#check(page, HISTORY_LOOKUP_CONCURRENCY, signal);
    for (const entry of page) {
      const verdict = verdicts.get(entry.signature)?.verdict;
      if (verdict === undefined) return;
      if (!isIgnored(verdict)) {
        this.#cursor = { signature: entry.signature, slot: entry.slot };
        return;
      }
    }
    if (page.length < HISTORY_PAGE_LIMIT) this.#cursor = null;
    else this.#baselineBefore = page.at(-1)!.signature;
  }

  /**
   * The verdict on each entry, in order, until the lookup bound (none from the first entry past it
   * on); entries this process signed need no lookup.
   */
  async #check(entries: readonly Listed[], maxLookups: number, signal: AbortSignal): Promise<Map<string, Checked>> {
    const verdicts = new Map<string, Checked>();
    const lookups: Listed[] = [];
    for (const entry of entries) {
      if (this.#signed.has(entry.signature)) verdicts.set(entry.signature, { verdict: 'own' });
      else if (this.#ignored.has(entry.signature)) verdicts.set(entry.signature, { verdict: this.#ignored.get(entry.signature)! });
      else if (lookups.length < maxLookups) lookups.push(entry);
      else break;
    }
    const found = await mapBounded(lookups, HISTORY_LOOKUP_CONCURRENCY, signal, async (entry, lookupSignal) =>
      this.#judge(
        verdictOn(await this.#rpc.getTransactionSignatures(entry.signature, lookupSignal), entry.signature, this.#authority, this.#lease),
        entry.signature,
      ),
    );
    lookups.forEach((entry, i) => {
      const checked = found[i]!;
      verdicts.set(entry.signature, checked);
      if (isIgnored(checked.verdict)) this.#ignore(entry.signature, checked.verdict);
    });
    this.#sayChecked(
      lookups,
      found.map(({ verdict }) => verdict),
    );
    return verdicts;
  }

  /** A verified transaction the key signed: the operator's nonce setup, a replay, or a second signer's. */
  #judge(checked: { verdict: Verdict; message?: Uint8Array }, signature: string): Checked {
    if (checked.verdict !== 'foreign' || checked.message === undefined) return { verdict: checked.verdict };
    const facts = messageFacts(checked.message, this.#poolAddresses);
    if (facts === undefined) return { verdict: 'unverified' };
    // Looking for the baseline: any verified transaction of the key is one; none is reported.
    if (this.#cursor === undefined) return { verdict: 'foreign' };
    if (facts.poolSetup) return { verdict: 'operator' };
    if (this.#beforeBaseline.has(signature) || !this.#recent.has(facts.blockhash)) return { verdict: 'stale' };
    // Signed against the value this process first saw of that nonce: its previous life's, left in flight at the restart, as likely as another signer's.
    if (facts.advances !== undefined && this.#recent.isFirstNonce(facts.advances, facts.blockhash)) return { verdict: 'stale' };
    return { verdict: 'foreign', ...(facts.advances === undefined ? {} : { advanced: { account: facts.advances, from: facts.blockhash } }) };
  }

  #sayChecked(lookups: readonly Listed[], found: readonly Verdict[]): void {
    const chain = this.#rpc.chain;
    const operator = lookups.filter((_, i) => found[i] === 'operator');
    if (operator.length > 0) {
      this.#logger.info(
        { chain, transactions: operator.map(({ signature }) => signature) },
        `${operator.length} transactions of this key only manage its own nonce accounts (create, fund, initialize, withdraw or re-authorize: \`npm run ops -- nonce init\`, or the operator's hand): ` +
          "the operator's, not a second signer; each account ready is a lane in nonce mode from the next cycle",
      );
    }
    const stale = lookups.filter((_, i) => found[i] === 'stale');
    if (stale.length > 0) {
      this.#metrics.signerEvidenceUnverified.inc({ chain }, stale.length);
      this.#logger.warn(
        { chain, stale: stale.length, first: stale[0]!.signature },
        `${stale.length} entries of the authority's history were signed with this key but are not new (their blockhash is none this process saw since it started, they landed before its first read, or they advance a nonce from the value this process first saw of it, as its previous life may have left in flight): a replayed or earlier transaction, not proof of a second signer; ignored`,
      );
    }
    const unverified = lookups.filter((_, i) => found[i] === 'unverified');
    if (unverified.length > 0) {
      this.#metrics.historyUnverified.inc({ chain: this.#rpc.chain }, unverified.length);
      this.#logger.warn(
        { chain: this.#rpc.chain, unverified: unverified.length, first: unverified[0]!.signature },
        `${unverified.length} entries of the authority's history do not verify (their signatures do not match their message): ignored, not a second signer; a history endpoint of this chain lies`,
      );
    }
  }

  #ignore(signature: string, verdict: Ignored): void {
    this.#ignored.set(signature, verdict);
    if (this.#ignored.size > MAX_SIGNED_KEPT) this.#ignored.delete(this.#ignored.keys().next().value as string);
  }

  /**
   * What landed after `until`, newest first; undefined when the node answering did not know `until` (look again later).
   * `until`'s slot is one node's word: it bounds the read only up to the chain's slot floor
   * (`untilSlot`; the floor exists once two answers agreed on a slot), so an inflated one can
   * neither ask a slot no node has reached nor make every listing look like one from a node that
   * does not know `until`.
   */
  async #listedSince(until: Listed | null, signal: AbortSignal): Promise<Listing | undefined> {
    const floor = this.#rpc.slotFloor();
    const untilSlot = until === null ? undefined : Math.min(until.slot, floor ?? until.slot);
    const bound = until === null ? {} : { until: until.signature, minContextSlot: untilSlot };
    const entries: Listed[] = [];
    let before: string | undefined;
    for (let page = 0; page < HISTORY_MAX_PAGES; page++) {
      const options = { limit: HISTORY_PAGE_LIMIT, ...bound, ...(before === undefined ? {} : { before }) };
      const batch = await this.#rpc.getSignaturesForAddress(this.#authority, options, signal);
      if (until !== null && untilSlot !== undefined && batch.some(({ slot }) => slot < untilSlot)) {
        this.#logger.debug(
          { chain: this.#rpc.chain, until: until.signature, untilSlot },
          "the node answering does not know the previous read's newest transaction; read again next cycle",
        );
        return undefined;
      }
      entries.push(...batch.map(({ signature, slot }) => ({ signature, slot })));
      if (batch.length < HISTORY_PAGE_LIMIT) return { entries, truncated: false };
      before = batch.at(-1)!.signature;
    }
    return { entries, truncated: true };
  }
}

interface Listing {
  /** Newest first. */
  entries: Listed[];
  /** The page bound ended the listing before `until`: older entries were not listed. */
  truncated: boolean;
}

/**
 * What a fetched transaction proves. Its id must be its fee payer's signature, verifying against
 * its message (the node could otherwise answer with another transaction, or with bytes that never
 * landed); then it names the authority as a signer (`foreign`, if that signature verifies too)
 * or not (`listed`).
 */
function verdictOn(
  transaction: TransactionSignatures | null,
  id: string,
  authority: PublicKey,
  lease: PublicKey | undefined,
): { verdict: Verdict; message?: Uint8Array } {
  if (transaction === null) return { verdict: 'missing' };
  const [payer] = transaction.signers;
  if (payer === undefined || bs58.encode(payer.signature) !== id || !verifies(transaction.message, payer)) return { verdict: 'unverified' };
  const own = transaction.signers.find(({ key }) => key === authority.toBase58());
  // Another instance taking, taking over or releasing the lease (src/chain/lease-account.ts), verified as signed: no vote.
  if (own === undefined || (lease !== undefined && isLeaseOperation(transaction.message, lease, authority))) return { verdict: 'listed' };
  return verifies(transaction.message, own) ? { verdict: 'foreign', message: transaction.message } : { verdict: 'unverified' };
}

function isIgnored(verdict: Verdict): verdict is Ignored {
  return verdict === 'missing' || verdict === 'unverified' || verdict === 'stale';
}

function verifies(message: Uint8Array, { key, signature }: { key: string; signature: Uint8Array }): boolean {
  return verifiesEd25519(ed25519PublicKeyObject(new PublicKey(key)), message, signature);
}
