import { createHash, randomBytes } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { AccountJournal, SYSTEM_PROGRAM_ID, type Account, type AccountStore, type UndoEntry } from '../program/store.js';
import {
  checkCommitmentLags,
  NO_COMMITMENT_LAGS,
  type BankView,
  type CommitmentLags,
  type CommitmentLevel,
  type SimulationResult,
} from './commitment-banks.js';
import { MinorityForks, type ForkSettings, type ForkState } from './minority-forks.js';
import { copyAccount, PastAccounts, SlotHistory } from './slot-history.js';
import { loadedAccountsRefusal } from './loaded-accounts.js';
import { BUILTIN_PROGRAMS, feeOf, LAMPORTS_PER_SIGNATURE, type Fee } from './compute-budget.js';
import { ComputeCosts, type ComputeCostTable } from './compute-costs.js';
import { executeInstructions, type ExecutionResult } from './execute.js';
import { durableNonceAccount, nonceAdvancedAfterFailure } from './nonce-account.js';
import { RECENT_BLOCKHASHES_SYSVAR_ID, recentBlockhashesSysvarAccount, RENT_SYSVAR_ID, rentSysvarAccount } from './sysvars.js';
import {
  AddressSignatures,
  BLOCKHASH_VALIDITY_BLOCKS,
  RecentBlockhashes,
  RecentBySignature,
  SignatureStatuses,
  type LandedTransaction,
  type SignatureStatus,
} from './history.js';
import { PrioritizationFees, type FeeHistoryMode, type PrioritizationFee } from './prioritization-fees.js';
import { balancesBefore, insufficientFundsForRent, rentStateAllowed, rentStateViolation } from './rent-state.js';
import { verifySignatures, type DevnetTransaction } from './transaction.js';
import type { TransactionError } from './transaction-error.js';

/**
 * One chain's ledger: accounts, slots, recent blockhashes, signature statuses, each address's
 * transaction history, fees.
 * Block height equals the slot. A slot passes on a timer, and a block holds every transaction
 * that arrives within its slot, in arrival order, as a leader's does; without the timer
 * (`slotIntervalMs` 0) each landed transaction ends its slot. While block production is paused,
 * nothing lands: accepted transactions wait and land in order on resume, and no blockhash expires.
 * Each commitment is its own bank (commitment-banks.ts): `at(commitment)` reads the chain as it
 * was at the end of that bank's slot, from what the later slots wrote (slot-history.ts); a fork
 * on demand is undone before it would be confirmed (minority-forks.ts).
 * Fees and compute follow PROTOCOL.md "Compute units and fees" (compute-budget.ts,
 * compute-costs.ts). Congestion: a transaction priced below the price floor waits, as on a
 * leader that keeps choosing better-paying ones, and lands only if the floor falls to its price
 * before its blockhash expires.
 */

export { LAMPORTS_PER_SIGNATURE } from './compute-budget.js';
const NATIVE_LOADER_ID = 'NativeLoader1111111111111111111111111111111';
const BPF_UPGRADEABLE_LOADER_ID = 'BPFLoaderUpgradeab1e11111111111111111111111';
const DEFAULT_MAX_STATUSES = 100_000;
// Whole transactions (up to 1232 bytes each) for getTransaction: about 12 MB at most.
const DEFAULT_MAX_TRANSACTIONS = 10_000;
// While paused (or priced below the floor), transactions beyond this many are dropped, as an overloaded leader drops them.
const MAX_WAITING = 10_000;

export interface BankOptions {
  chainId: number;
  programId: PublicKey;
  /** Milliseconds per slot; 0 disables the timer (slots then pass only with transactions and advanceSlots). */
  slotIntervalMs: number;
  /** How many landed transactions keep their status and their place in address histories. */
  maxSignatureStatuses?: number;
  /** How many landed transactions getTransaction can still return. */
  maxTransactions?: number;
  /** The bridge program's compute costs times this (default 1): see compute-costs.ts. */
  computeCostScale?: number;
  /** How far the confirmed and finalized banks trail the head (default none: one bank for every commitment). */
  commitmentLags?: CommitmentLags;
}

export class Bank {
  readonly chainId: number;
  readonly programId: PublicKey;
  readonly #programAddress: string;
  readonly #accounts = new Map<string, Account>();
  readonly #blockhashes = new RecentBlockhashes();
  readonly #statuses: SignatureStatuses;
  readonly #addressSignatures: AddressSignatures;
  readonly #transactions: RecentBySignature<LandedTransaction>;
  readonly #genesisSeed = randomBytes(32);
  readonly #waiting: Array<() => void> = [];
  readonly #belowFloor = new Map<string, DevnetTransaction>();
  readonly #inFlight: Array<{ due: number; tx: DevnetTransaction; signaturesVerified: boolean }> = [];
  #landingInFlight = false;
  readonly #costs: ComputeCosts;
  readonly #prioritizationFees = new PrioritizationFees();
  #priceFloor = 0n;
  /** The RecentBlockhashes sysvar's data lags the latest blockhash until it is read. */
  #recentBlockhashesStale = true;
  #slot = 0;
  #latestBlockhash = '';
  #paused = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #blockPerTransaction: boolean;
  readonly #lags: CommitmentLags;
  readonly #history = new SlotHistory();
  readonly #forks = new MinorityForks();
  /** Transactions landed in the open slot, and on the chain since genesis (each one's landing order). */
  #slotTransactions = 0;
  #landedCount = 0;

  constructor(options: BankOptions) {
    this.chainId = options.chainId;
    this.programId = options.programId;
    this.#programAddress = options.programId.toBase58();
    const maxStatuses = options.maxSignatureStatuses ?? DEFAULT_MAX_STATUSES;
    this.#statuses = new SignatureStatuses(maxStatuses);
    this.#addressSignatures = new AddressSignatures(maxStatuses);
    this.#transactions = new RecentBySignature(options.maxTransactions ?? DEFAULT_MAX_TRANSACTIONS);
    this.#costs = new ComputeCosts(options.computeCostScale);
    this.#lags = checkCommitmentLags(options.commitmentLags ?? NO_COMMITMENT_LAGS);
    this.#blockPerTransaction = options.slotIntervalMs === 0;
    this.slotIntervalMs = options.slotIntervalMs;
    this.#createGenesisAccounts();
    this.#makeBlockhash();
    if (options.slotIntervalMs > 0) {
      this.#timer = setInterval(() => this.#onTick(), options.slotIntervalMs);
      this.#timer.unref();
    }
  }

  /** How long a slot lasts (0: each landed transaction ends its own). */
  readonly slotIntervalMs: number;

  get slot(): number {
    return this.#slot;
  }

  get blockHeight(): number {
    return this.#slot;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** The live account (callers that hand it out copy it first). */
  account(address: string): Readonly<Account> | undefined {
    if (address === RECENT_BLOCKHASHES_SYSVAR_ID && this.#recentBlockhashesStale) {
      this.#accounts.set(address, recentBlockhashesSysvarAccount(this.#blockhashes.newestFirst(), BigInt(LAMPORTS_PER_SIGNATURE)));
      this.#recentBlockhashesStale = false;
    }
    return this.#accounts.get(address);
  }

  /** A copy of every account as it is now: what a lagging node still serves a few slots later (faults' `alternateBehindSlots`). */
  copyOfAccounts(): Map<string, Account> {
    return new Map([...this.#accounts].map(([address, account]) => [address, copyAccount(account)]));
  }

  get commitmentLags(): CommitmentLags {
    return { ...this.#lags };
  }

  /** The slot of a commitment's bank: the head, or the confirmed or finalized lag behind it (never before genesis). */
  slotOf(commitment: CommitmentLevel): number {
    const lag = commitment === 'processed' ? 0 : commitment === 'confirmed' ? this.#lags.confirmedLagSlots : this.#lags.finalizedLagSlots;
    return Math.max(0, this.#slot - lag);
  }

  /** The bank of `commitment`: the chain as it was at the end of its slot. */
  at(commitment: CommitmentLevel): BankView {
    const slot = this.slotOf(commitment);
    const seen = <T extends { slot: number }>(entry: T | undefined): T | undefined => (entry !== undefined && entry.slot <= slot ? entry : undefined);
    return {
      commitment,
      slot,
      blockHeight: slot,
      confirmedSlot: this.slotOf('confirmed'),
      finalizedSlot: this.slotOf('finalized'),
      account: (address) => this.#accountAt(address, slot),
      latestBlockhash: (behindSlots = 0) => this.latestBlockhash(behindSlots + this.#slot - slot),
      signatureStatus: (signature) => seen(this.#statuses.get(signature)),
      transaction: (signature) => seen(this.#transactions.get(signature)),
      signaturesForAddress: (address, query) => this.#addressSignatures.query(address, query).filter((entry) => entry.slot <= slot),
      simulate: (tx, options) => this.#simulateAt(slot, tx, options),
    };
  }

  /** Minority forks on demand (minority-forks.ts); `random` draws `forkShare`. */
  setForks(settings: ForkSettings, random: () => number): void {
    this.#forks.set(settings, this.#lags.confirmedLagSlots, random);
  }

  clearForks(): void {
    this.#forks.clear();
  }

  get forks(): ForkState {
    return this.#forks.state;
  }

  /** Slots whose writes are kept to answer the older banks (at most the finalized lag). */
  get historySlotsKept(): number {
    return this.#history.slotsKept;
  }

  /**
   * A change the chain makes in the open slot outside a transaction (an airdrop; a program
   * upgrade): recorded like a transaction's writes, so the confirmed and finalized banks see it
   * once they reach this slot, and a fork abandons it with the slot.
   */
  write(change: (store: AccountStore) => void): void {
    const journal = new AccountJournal(this.#accounts);
    change(journal);
    this.#commit(journal);
  }

  /** Direct write access for test affordances that seed state without transactions: every bank sees it at once (not recorded). */
  journal(): AccountJournal {
    return new AccountJournal(this.#accounts);
  }

  /** The latest blockhash, or the one made `behindSlots` blocks earlier (what a lagging node knows as its latest). */
  latestBlockhash(behindSlots = 0): { blockhash: string; lastValidBlockHeight: number } {
    return this.#blockhashes.newestMadeBy(this.blockHeight - behindSlots);
  }

  isBlockhashValid(blockhash: string): boolean {
    return this.#blockhashes.isValid(blockhash, this.blockHeight);
  }

  /** The status at the head (the processed bank's). */
  signatureStatus(signature: string): SignatureStatus | undefined {
    return this.#statuses.get(signature);
  }

  /** A recently landed transaction (airdrops have none: they are not real transactions). */
  transaction(signature: string): LandedTransaction | undefined {
    return this.#transactions.get(signature);
  }

  feeFor(tx: DevnetTransaction): bigint {
    return this.#fee(tx).total;
  }

  /** Recently landed transactions, oldest first (what each paid, for tests and benchmarks). */
  landedTransactions(): IterableIterator<LandedTransaction> {
    return this.#transactions.values();
  }

  /** The bridge program's current compute costs. */
  get computeCosts(): ComputeCostTable {
    return this.#costs.table();
  }

  /** A program upgrade: the bridge program's costs become this version's times `scale`. */
  setComputeCostScale(scale: number): ComputeCostTable {
    return this.#costs.setScale(scale);
  }

  /** getRecentPrioritizationFees: the last 150 completed slots, oldest first. */
  recentPrioritizationFees(accounts: readonly string[]): PrioritizationFee[] {
    return this.#prioritizationFees.recent(accounts);
  }

  get priceFloor(): bigint {
    return this.#priceFloor;
  }

  get feeHistoryFrozen(): boolean {
    return this.#prioritizationFees.frozen;
  }

  /** Transactions accepted below the price floor, waiting for it to fall or their blockhash to expire. */
  get waitingBelowFloor(): number {
    return this.#belowFloor.size;
  }

  /**
   * Congestion (micro-lamports per compute unit): transactions priced below it wait; every slot
   * completed while it is set reports at least it in the fee history. Lowering it lets the
   * waiting transactions that now clear land (in arrival order) while their blockhash is valid.
   */
  setPriceFloor(floor: bigint): void {
    this.#priceFloor = floor;
    for (const [signature, waiting] of this.#belowFloor) {
      if (waiting.budget.unitPrice < floor) continue;
      this.#belowFloor.delete(signature);
      // Its signatures were verified before it first waited: it is the same transaction.
      this.#whenProducing(() => this.#land(waiting, true));
    }
  }

  get feeHistoryMode(): FeeHistoryMode {
    return this.#prioritizationFees.mode;
  }

  /** `floor`: the history shows a price floor; `minimum`: per-slot minimums as Agave's cache reports a surge, mostly 0 (prioritization-fees.ts). */
  setFeeHistoryMode(mode: FeeHistoryMode): void {
    this.#prioritizationFees.mode = mode;
  }

  /** While frozen, the fee history stays at its last value: it lags a surge (see prioritization-fees.ts). */
  freezeFeeHistory(frozen: boolean): void {
    this.#prioritizationFees.freeze(frozen);
  }

  /**
   * Runs the transaction against the current state and undoes everything (preflight). With
   * `blockhashLagSlots`, the blockhashes of the newest that many blocks are unknown, as on a
   * node that has not seen them yet.
   */
  simulate(tx: DevnetTransaction, options: { checkBlockhash: boolean; blockhashLagSlots?: number; accounts?: string[] }): SimulationResult {
    return this.#simulateAt(this.#slot, tx, options);
  }

  #simulateAt(
    slot: number,
    tx: DevnetTransaction,
    options: { checkBlockhash: boolean; blockhashLagSlots?: number; accounts?: string[] },
  ): SimulationResult {
    const state = slot === this.#slot ? this.#state() : this.#pastState(slot);
    const lag = (options.blockhashLagSlots ?? 0) + this.#slot - slot;
    const rejected = this.#check(state, tx, options.checkBlockhash, lag) ?? this.#loadError(state, tx);
    if (rejected !== undefined) return { err: rejected, logs: [], unitsConsumed: 0, accounts: [] };
    const { accounts } = state;
    const before = balancesBefore(tx, (address) => accounts.get(address));
    const journal = new AccountJournal(accounts);
    const payer = tx.accountKeys[0]!;
    journal.setLamports(payer, accounts.get(payer)!.lamports - this.feeFor(tx));
    const result = this.#execute(state, journal, tx, before);
    const after = (options.accounts ?? []).map((address) => {
      const account = address === RECENT_BLOCKHASHES_SYSVAR_ID ? this.#accountAt(address, slot) : accounts.get(address);
      return account === undefined ? undefined : copyAccount(account);
    });
    journal.rollback();
    return { ...result, accounts: after };
  }

  /**
   * Hands the transaction to the block producer: it lands now (or on resume while paused), or,
   * in flight for `landAfterSlots`, with the first block produced that many slots from now.
   * As on a cluster, a transaction that cannot be charged (bad signature, unknown or expired
   * blockhash, a nonce that moved, duplicate, payer without funds) when it lands is dropped
   * without a status.
   */
  submit(tx: DevnetTransaction, signaturesVerified: boolean, landAfterSlots = 0): void {
    if (landAfterSlots === 0) return this.#whenProducing(() => this.#land(tx, signaturesVerified));
    if (this.#inFlight.length >= MAX_WAITING) return;
    const due = this.#slot + landAfterSlots;
    // Sorted by the slot due, in arrival order within one slot.
    const at = this.#inFlight.findIndex((entry) => entry.due > due);
    this.#inFlight.splice(at === -1 ? this.#inFlight.length : at, 0, { due, tx, signaturesVerified });
  }

  /** Transactions sent with an in-flight delay that have not reached the block producer yet. */
  get inFlight(): number {
    return this.#inFlight.length;
  }

  /** Credits `lamports` (creating a system account) in a transaction of its own; returns its signature. */
  airdrop(address: string, lamports: bigint): string {
    const signature = bs58.encode(randomBytes(64));
    this.#whenProducing(() => {
      this.write((store) => {
        const existing = store.get(address);
        if (existing === undefined) store.create(address, { lamports, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false });
        else store.setLamports(address, existing.lamports + lamports);
      });
      this.#recordLanded(signature, null, [address]);
      this.#endSlotIfPerTransaction();
    });
    return signature;
  }

  advanceSlots(count: number): void {
    for (let i = 0; i < count; i += 1) this.#produceBlock();
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    for (const land of this.#waiting.splice(0)) land();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#waiting.length = 0;
    this.#belowFloor.clear();
    this.#inFlight.length = 0;
  }

  #whenProducing(land: () => void): void {
    if (!this.#paused) land();
    else if (this.#waiting.length < MAX_WAITING) this.#waiting.push(land);
  }

  #land(tx: DevnetTransaction, signaturesVerified: boolean): void {
    if (!signaturesVerified && !verifySignatures(tx)) return;
    const state = this.#state();
    if (this.#check(state, tx, true) !== undefined) return;
    if (tx.budget.unitPrice < this.#priceFloor) {
      this.#waitForPrice(tx);
      return;
    }
    const before = balancesBefore(tx, (address) => this.#accounts.get(address));
    const nonce = this.isBlockhashValid(tx.recentBlockhash) ? undefined : this.#durableNonce(state, tx);
    const payer = tx.accountKeys[0]!;
    const fee = this.#fee(tx);
    // SIMD-0191: a transaction that fails to load is committed fee-only, as one that fails in execution.
    const loadError = this.#loadError(state, tx);
    const charged = new AccountJournal(this.#accounts);
    charged.setLamports(payer, this.#accounts.get(payer)!.lamports - fee.total);
    this.#commit(charged);
    const journal = new AccountJournal(this.#accounts);
    const { err, logs, unitsConsumed } =
      loadError === undefined ? this.#execute(state, journal, tx, before) : { err: loadError, logs: [], unitsConsumed: 0 };
    if (err === null) this.#commit(journal);
    else journal.rollback();
    const after = new AccountJournal(this.#accounts);
    if (err !== null && nonce !== undefined) after.create(nonce, nonceAdvancedAfterFailure(nonce, this.#accounts.get(nonce)!, this.#latestBlockhash));
    // As on a cluster, an account left without lamports is gone: getAccountInfo answers null.
    for (const address of tx.accountKeys) if (this.#accounts.get(address)?.lamports === 0n) after.remove(address);
    this.#commit(after);
    this.#recordLanded(tx.signature, err, tx.accountKeys);
    this.#prioritizationFees.recordTransaction(
      tx.budget.unitPrice,
      tx.budget.unitLimit,
      tx.accountKeys.filter((_, index) => tx.writable[index]),
    );
    this.#transactions.record(tx.signature, {
      slot: this.#slot,
      blockTime: nowSeconds(),
      err,
      feePayer: payer,
      fee: fee.total,
      priorityFee: fee.priority,
      computeUnitLimit: tx.budget.unitLimit,
      computeUnitPrice: tx.budget.unitPrice,
      computeUnitsConsumed: unitsConsumed,
      logMessages: logs,
      wire: tx.wire,
      version: tx.version,
    });
    this.#endSlotIfPerTransaction();
  }

  /** Keeps what a committed journal replaced under the open slot, for the older banks and for a fork's undo. */
  #commit(journal: AccountJournal): void {
    const entries: UndoEntry[] = journal.commit();
    this.#history.record(this.#slot, entries);
  }

  /** Without a slot timer nothing else ends a slot: each transaction lands in a block of its own. */
  #endSlotIfPerTransaction(): void {
    if (this.#blockPerTransaction) this.#produceBlock();
  }

  /** The head's state: the live accounts, the latest blockhash. */
  #state(): BankState {
    return { accounts: this.#accounts, blockhash: this.#latestBlockhash, blockHeight: this.blockHeight };
  }

  /**
   * An older bank's state, read on demand (slot-history.ts); only simulations run on it. A frozen
   * bank's latest blockhash is its own, registered at its last tick (Agave's Bank::register_tick):
   * the one the next slot's transactions see, so a nonce advanced in that slot advances again here.
   */
  #pastState(slot: number): BankState {
    return {
      accounts: new PastAccounts((address) => this.#accountAt(address, slot)),
      blockhash: this.latestBlockhash(this.#slot - slot - 1).blockhash,
      blockHeight: slot,
    };
  }

  /** An account at the end of `slot` (the head's open slot: as it is now). */
  #accountAt(address: string, slot: number): Readonly<Account> | undefined {
    if (address === RECENT_BLOCKHASHES_SYSVAR_ID && slot < this.#slot) {
      return recentBlockhashesSysvarAccount(this.#blockhashes.newestFirst(slot), BigInt(LAMPORTS_PER_SIGNATURE));
    }
    const live = this.account(address);
    return slot >= this.#slot ? live : this.#history.accountAt(address, slot, live);
  }

  /** check_transaction_age: a recent blockhash (one the newest `lagSlots` blocks did not make), or the stored value of the durable nonce the transaction advances. */
  #ageValid(state: BankState, tx: DevnetTransaction, lagSlots: number): boolean {
    return (
      this.#blockhashes.isValid(tx.recentBlockhash, state.blockHeight, this.blockHeight - lagSlots) || this.#durableNonce(state, tx) !== undefined
    );
  }

  /** The durable nonce account `tx` advances when its recent blockhash is that nonce's value (nonce-account.ts). */
  #durableNonce(state: BankState, tx: DevnetTransaction): string | undefined {
    return durableNonceAccount(tx, (address) => state.accounts.get(address), state.blockhash);
  }

  #waitForPrice(tx: DevnetTransaction): void {
    if (this.#belowFloor.size >= MAX_WAITING) this.#dropExpiredBelowFloor();
    if (this.#belowFloor.size < MAX_WAITING) this.#belowFloor.set(tx.signature, tx);
  }

  #dropExpiredBelowFloor(): void {
    for (const [signature, tx] of this.#belowFloor) {
      if (!this.#ageValid(this.#state(), tx, 0)) this.#belowFloor.delete(signature);
    }
  }

  #fee(tx: DevnetTransaction): Fee {
    return feeOf(tx.signatures.length, tx.budget);
  }

  /** The instructions, then the rent states they left (only when every instruction succeeded). */
  #execute(state: BankState, journal: AccountJournal, tx: DevnetTransaction, before: readonly bigint[]): ExecutionResult {
    const result = executeInstructions(journal, tx, this.#env(state));
    if (result.err !== null) return result;
    return { ...result, err: rentStateViolation(tx, before, (address) => state.accounts.get(address)) ?? null };
  }

  #recordLanded(signature: string, err: TransactionError | null, addresses: readonly string[]): void {
    const seq = this.#landedCount;
    this.#landedCount += 1;
    this.#slotTransactions += 1;
    this.#statuses.record(signature, { slot: this.#slot, seq, err });
    this.#addressSignatures.record({ signature, slot: this.#slot, seq, err, blockTime: nowSeconds() }, addresses);
  }

  /** The checks a cluster makes before it charges a fee: blockhash age, duplicate, compute budget, fee payer (and its rent state). */
  #check(state: BankState, tx: DevnetTransaction, checkBlockhash: boolean, blockhashLagSlots = 0): TransactionError | undefined {
    if (checkBlockhash && !this.#ageValid(state, tx, blockhashLagSlots)) return 'BlockhashNotFound';
    if (this.#statuses.has(tx.signature)) return 'AlreadyProcessed';
    if (tx.budget.error !== undefined) return tx.budget.error;
    const payer = state.accounts.get(tx.accountKeys[0]!);
    if (payer === undefined || payer.lamports === 0n) return 'AccountNotFound';
    const fee = this.feeFor(tx);
    if (payer.lamports < fee) return 'InsufficientFundsForFee';
    if (!rentStateAllowed(payer.lamports, payer.lamports - fee, payer.data.length)) return insufficientFundsForRent(0);
    return undefined;
  }

  /**
   * Agave loads the accounts after it has validated the fee payer, counting their data against
   * the limit, then every invoked program; one that is not an executable account, or more data
   * than the limit, fails the load. Since SIMD-0191 a failed load is committed fee-only: the fee
   * charged, a durable nonce advanced, the status recorded (LiteSVM 1.5 still drops it for free).
   * Only data lengths count here, so the stored accounts serve: account() would rebuild a stale
   * RecentBlockhashes (150 decodes) whose stored copy, written at genesis, is already its fixed 6,008 bytes.
   */
  #loadError(state: BankState, tx: DevnetTransaction): TransactionError | undefined {
    const overLimit = loadedAccountsRefusal(tx.accountKeys, tx.budget.loadedAccountsBytes, (address) => state.accounts.get(address));
    if (overLimit !== undefined) return overLimit;
    if (tx.instructions.some((ix) => state.accounts.get(tx.accountKeys[ix.programIdIndex]!)?.executable !== true))
      return 'InvalidProgramForExecution';
    return undefined;
  }

  #env(state: BankState) {
    return {
      programId: this.programId,
      programAddress: this.#programAddress,
      chainId: this.chainId,
      slot: state.blockHeight,
      blockhash: state.blockhash,
      costs: this.#costs,
    };
  }

  #onTick(): void {
    if (!this.#paused) this.#produceBlock();
  }

  #produceBlock(): void {
    this.#prioritizationFees.completeSlot(this.#slot, this.#priceFloor);
    this.#forks.completed(this.#slot, this.#slotTransactions, this.#lags.confirmedLagSlots);
    this.#slotTransactions = 0;
    this.#slot += 1;
    this.#makeBlockhash();
    const abandonFrom = this.#forks.due(this.#slot);
    if (abandonFrom !== undefined) this.#abandonFork(abandonFrom);
    this.#history.prune(this.slotOf('finalized'));
    this.#blockhashes.prune(this.blockHeight);
    // Once per blockhash lifetime, so waiting transactions are held at most about two lifetimes.
    if (this.#slot % BLOCKHASH_VALIDITY_BLOCKS === 0) this.#dropExpiredBelowFloor();
    this.#landInFlight();
  }

  /**
   * The cluster chose another fork than slots `from` to the head's last: what they wrote is
   * undone, their transactions forgotten (statuses, history, getTransaction), and the blockhashes
   * made on their blocks are unknown to the majority fork. Nothing re-lands them: a sender
   * (with maxRetries 0, as the bridge server sends) must send them again.
   */
  #abandonFork(from: number): void {
    const abandoned = (entry: { slot: number }) => entry.slot >= from;
    let lost = 0;
    this.#statuses.forget((status) => {
      if (abandoned(status)) lost += 1;
      return abandoned(status);
    });
    this.#history.undoFrom(from, this.#accounts);
    this.#transactions.forget(abandoned);
    this.#addressSignatures.forgetFrom(from);
    this.#blockhashes.forgetMade(from + 1, this.#slot - 1);
    this.#recentBlockhashesStale = true;
    this.#forks.abandoned(lost);
  }

  /** Lands the in-flight transactions now due; without a slot timer each lands in a block of its own, so this runs once, not per block it produces. */
  #landInFlight(): void {
    if (this.#landingInFlight) return;
    this.#landingInFlight = true;
    try {
      while (this.#inFlight.length > 0 && this.#inFlight[0]!.due <= this.#slot) {
        const { tx, signaturesVerified } = this.#inFlight.shift()!;
        this.#whenProducing(() => this.#land(tx, signaturesVerified));
      }
    } finally {
      this.#landingInFlight = false;
    }
  }

  #makeBlockhash(): void {
    const slot = Buffer.alloc(8);
    slot.writeBigUInt64LE(BigInt(this.#slot));
    this.#latestBlockhash = bs58.encode(createHash('sha256').update(this.#genesisSeed).update(slot).digest());
    this.#blockhashes.add(this.#latestBlockhash, this.blockHeight);
    this.#recentBlockhashesStale = true;
  }

  #createGenesisAccounts(): void {
    const programData = PublicKey.findProgramAddressSync([this.programId.toBuffer()], new PublicKey(BPF_UPGRADEABLE_LOADER_ID))[0];
    // UpgradeableLoaderState::Program { programdata_address }: tag 2 (u32), then the address.
    const programAccountData = new Uint8Array(36);
    programAccountData[0] = 2;
    programAccountData.set(programData.toBytes(), 4);
    this.#accounts.set(this.programId.toBase58(), {
      lamports: 1_141_440n,
      owner: BPF_UPGRADEABLE_LOADER_ID,
      data: programAccountData,
      executable: true,
    });
    for (const { id, loaderName } of BUILTIN_PROGRAMS) {
      this.#accounts.set(id, { lamports: 1n, owner: NATIVE_LOADER_ID, data: new TextEncoder().encode(loaderName), executable: true });
    }
    this.#accounts.set(RENT_SYSVAR_ID, rentSysvarAccount());
    // Its data is written when it is first read (account()).
    this.#accounts.set(RECENT_BLOCKHASHES_SYSVAR_ID, recentBlockhashesSysvarAccount([], BigInt(LAMPORTS_PER_SIGNATURE)));
  }
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** The state a transaction runs on: the head's, or an older bank's (a simulation at a lagging commitment). */
interface BankState {
  accounts: Map<string, Account>;
  /** The bank's latest blockhash: a nonce advanced on it takes its value. */
  blockhash: string;
  blockHeight: number;
}
