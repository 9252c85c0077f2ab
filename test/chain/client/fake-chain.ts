import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { encodeDepositEntry, encodeTrackerHeader, encodeWithdrawEntry } from '../../../src/chain/codec/accounts.js';
import { readComputeBudget } from '../../../devnet/bank/compute-budget.js';
import { decodeInstructionData } from '../../../src/chain/codec/instructions.js';
import { CURRENT_NONCE_VERSION, encodeNonceState, NONCE_ACCOUNT_SIZE } from '../../../src/chain/codec/nonce-state.js';
import { DEPOSIT_ENTRY_SIZE, TRACKER_HEADER_SIZE, WITHDRAW_ENTRY_SIZE } from '../../../src/chain/codec/layout.js';
import { NONCE_ACCOUNT_RENT_LAMPORTS } from '../../../src/chain/nonce-account.js';
import { PROGRAM_ERRORS, type ProgramErrorName } from '../../../src/chain/program-errors.js';
import type { DepositEntry, TrackerHeader, WithdrawEntry } from '../../../src/chain/types.js';
import { startJsonRpcServer, type JsonRpcTestServer, type Reply, type RpcCall } from '../rpc/json-rpc-test-server.js';

/**
 * A scripted single-tracker Solana node for client tests, over real HTTP on 127.0.0.1. It
 * serves the tracker's bytes (with dataSlice and a separate finalized snapshot), balances,
 * blockhashes with a block height the test moves, and runs a small model of the crank's three
 * instructions (positions, EntryNotFound, EntryNotFinalized, CleanupAlreadyCompleted) so that
 * a transaction lands at most once per signature and a repeated vote fails VoteOutOfOrder.
 *
 * `onSend` scripts faults per send: lose the response, ignore the transaction, or both.
 *
 * Compute and fees follow PROTOCOL.md "Compute units and fees" in small: each bridge instruction
 * costs `unitsPerInstruction`, each builtin (ComputeBudget, System) one 150; the limit is
 * SetComputeUnitLimit's (or 200,000 per bridge instruction and 3,000 per System one); a
 * transaction priced below `clearingPrice` is accepted and never lands;
 * getRecentPrioritizationFees answers `recentFees`.
 *
 * Durable nonces as PROTOCOL.md "Durable nonces" has them, in small: InitializeNonceAccount makes
 * a nonce account, a transaction led by AdvanceNonceAccount is valid while the account holds its
 * recent-blockhash value, and its landing (failed or not) moves the value.
 *
 * Banks as Agave answers from them, in small: `slot` is the head (processed); reads that name
 * confirmed or finalized answer at `slot - confirmedLag` (minContextSlot judged there), getSlot
 * by commitment, statuses from the head, `processed` until the confirmed bank reaches them. A
 * minority fork on demand (`forkLandings`): the next landings are processed on a fork (status
 * `processed`, state and nonce untouched, as the confirmed bank sees them) and abandoned after
 * `forkPolls` status answers showed them: their statuses vanish and the same bytes can land again.
 */

/** `gateway-timeout`: the transaction is processed and the answer lost on the way back (HTTP 504). */
export type SendFault = 'none' | 'drop-response' | 'gateway-timeout' | 'ignore' | 'ignore-and-drop-response';

export interface SendRecord {
  signature: string;
  wire: string;
  skipPreflight: boolean;
  /** 1 for the first time this signature arrives, 2 for the first rebroadcast, ... */
  count: number;
}

export interface TrackerState {
  header: TrackerHeader;
  entries: Array<DepositEntry | WithdrawEntry>;
}

interface Status {
  err: unknown;
  slot: number;
}

export class FakeChain {
  blockHeight = 1_000;
  slot = 50_000;
  /** Blocks a blockhash stays valid. */
  validity = 150;
  /** Added to the block height at every getEpochInfo call. */
  blocksPerHeightCall = 0;
  owner: PublicKey;
  balances = new Map<string, number>();
  /** When set, reads at commitment 'finalized' see this state instead of `tracker`. */
  finalized: TrackerState | undefined;
  onSend: (send: SendRecord) => SendFault = () => 'none';
  /** When set, the tracker account holds exactly these bytes (forged or damaged data) instead of `tracker` rendered. */
  rawAccount: Uint8Array | undefined;
  /** Compute units each bridge instruction costs. */
  unitsPerInstruction = 20_000;
  /** Transactions priced below this (micro-lamports per CU) are accepted and never land. */
  clearingPrice = 0;
  /** What getRecentPrioritizationFees answers. */
  recentFees: Array<{ slot: number; prioritizationFee: number }> = [];
  /** The compute budget of each transaction that landed (with an error or not), by signature. */
  readonly budgets = new Map<string, { unitLimit: number; price: number; unitsConsumed: number; loadedAccountsBytes: number }>();
  /**
   * Bytes every transaction's accounts load, when set: one whose SetLoadedAccountsDataSizeLimit
   * is below it fails MaxLoadedAccountsDataSizeExceeded before it runs (an account holds more
   * than the crank counted).
   */
  loadedAccountsBytes: number | undefined;
  /**
   * Durable nonces by account address: a transaction whose first instruction is
   * AdvanceNonceAccount of one is valid while its recent-blockhash field holds the value, and
   * its landing (with an error or not) moves the value, as Agave does.
   */
  readonly nonces = new Map<string, { authority: PublicKey; value: string }>();
  /** Added to the slot at every read of a nonce account: slots pass while a transaction waits. */
  slotsPerNonceRead = 0;
  /** Slots the confirmed (and finalized) bank trails the head. */
  confirmedLag = 0;
  /** Added to the slot at every getSignatureStatuses: the head moves while a transaction is watched. */
  slotsPerStatusPoll = 0;
  /** Landings still to be processed on a minority fork instead of landing. */
  forkLandings = 0;
  /** Status answers that show a fork's transaction before the fork is abandoned. */
  forkPolls = 2;
  /** Transactions on the fork: their slot and the status answers left before it is abandoned. */
  readonly forked = new Map<string, { slot: number; pollsLeft: number }>();
  /** Replaces the answer to a method, e.g. to fail getSignatureStatuses. */
  override: ((call: RpcCall) => Reply | undefined) | undefined;

  readonly sends: SendRecord[] = [];
  readonly statuses = new Map<string, Status>();
  /** Block height at each getLatestBlockhash: when the client signed. */
  readonly blockhashRequests: Array<{ blockHeight: number; lastValidBlockHeight: number }> = [];
  private readonly blockhashes = new Map<string, number>();
  private server: JsonRpcTestServer | undefined;

  constructor(
    readonly programId: PublicKey,
    readonly trackerAddress: PublicKey,
    public tracker: TrackerState,
  ) {
    this.owner = programId;
  }

  get url(): string {
    if (this.server === undefined) throw new Error('FakeChain not started');
    return this.server.url;
  }

  get calls(): RpcCall[] {
    return this.server?.calls ?? [];
  }

  /** Signatures that landed without error. */
  get landed(): string[] {
    return [...this.statuses].filter(([, status]) => status.err === null).map(([signature]) => signature);
  }

  async start(): Promise<this> {
    this.server = await startJsonRpcServer((call) => this.override?.(call) ?? this.answer(call));
    return this;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }

  /** The slot of the bank a call's commitment reads (the head for processed, and for getSignatureStatuses). */
  private bankSlot(call: RpcCall): number {
    const config = call.params.at(-1) as { commitment?: string } | undefined;
    return call.method === 'getSignatureStatuses' || config?.commitment === 'processed' ? this.slot : this.slot - this.confirmedLag;
  }

  private answer(call: RpcCall): Reply {
    const context = { slot: this.bankSlot(call) };
    switch (call.method) {
      case 'getSlot':
        return { result: context.slot };
      case 'getAccountInfo':
        return this.getAccountInfo(call.params);
      case 'getMultipleAccounts':
        return this.getMultipleAccounts(call.params);
      case 'getBalance':
        return { result: { context, value: this.balances.get(call.params[0] as string) ?? 0 } };
      case 'getLatestBlockhash':
        return { result: { context, value: this.newBlockhash() } };
      case 'getEpochInfo':
        this.blockHeight += this.blocksPerHeightCall;
        return { result: { absoluteSlot: context.slot, blockHeight: this.blockHeight, epoch: 0, slotIndex: this.slot, slotsInEpoch: 432_000 } };
      case 'getSignatureStatuses':
        this.slot += this.slotsPerStatusPoll;
        return { result: { context, value: (call.params[0] as string[]).map((signature) => this.statusOf(signature)) } };
      case 'sendTransaction':
        return this.sendTransaction(call.params);
      case 'simulateTransaction':
        return this.simulateTransaction(call.params);
      case 'getRecentPrioritizationFees':
        return { result: this.recentFees };
      case 'getTransaction':
        return { result: this.landedTransaction(call.params[0] as string) };
      default:
        return { error: { code: -32601, message: `Method not found: ${call.method}` } };
    }
  }

  private newBlockhash() {
    const blockhash = bs58.encode(Keypair.generate().publicKey.toBytes());
    const lastValidBlockHeight = this.blockHeight + this.validity;
    this.blockhashes.set(blockhash, lastValidBlockHeight);
    this.blockhashRequests.push({ blockHeight: this.blockHeight, lastValidBlockHeight });
    return { blockhash, lastValidBlockHeight };
  }

  private statusOf(signature: string) {
    const fork = this.forked.get(signature);
    if (fork !== undefined) {
      fork.pollsLeft -= 1;
      if (fork.pollsLeft <= 0) this.forked.delete(signature);
      return { slot: fork.slot, confirmations: 0, err: null, confirmationStatus: 'processed', status: { Ok: null } };
    }
    const status = this.statuses.get(signature);
    if (status === undefined) return null;
    const confirmationStatus = status.slot <= this.slot - this.confirmedLag ? 'confirmed' : 'processed';
    return {
      slot: status.slot,
      confirmations: 1,
      err: status.err,
      confirmationStatus,
      status: status.err === null ? { Ok: null } : { Err: status.err },
    };
  }

  private getAccountInfo(params: unknown[]): Reply {
    const [address, config] = params as [string, AccountReadConfig];
    const slot = this.slot - (config.commitment === 'processed' ? 0 : this.confirmedLag);
    if (config.minContextSlot !== undefined && config.minContextSlot > slot) return MIN_CONTEXT_SLOT_NOT_REACHED;
    const value = this.account(address, config);
    return { result: { context: { slot }, value } };
  }

  private getMultipleAccounts(params: unknown[]): Reply {
    const [addresses, config] = params as [string[], AccountReadConfig];
    const slot = this.slot - (config.commitment === 'processed' ? 0 : this.confirmedLag);
    if (config.minContextSlot !== undefined && config.minContextSlot > slot) return MIN_CONTEXT_SLOT_NOT_REACHED;
    const value = addresses.map((address) => this.account(address, config));
    return { result: { context: { slot }, value } };
  }

  private account(address: string, config: AccountReadConfig): EncodedAccount | null {
    const nonce = this.nonces.get(address);
    if (nonce !== undefined) return this.nonceAccount(nonce, config.dataSlice);
    if (address !== this.trackerAddress.toBase58()) return null;
    const state = config.commitment === 'finalized' && this.finalized !== undefined ? this.finalized : this.tracker;
    const space = this.rawAccount?.length ?? this.accountSize(state);
    const { offset, length } = config.dataSlice ?? { offset: 0, length: space };
    // A node clamps a dataSlice to the account's data, as the devnet does.
    const data = this.rawAccount?.subarray(offset, offset + length) ?? renderSlice(state, offset, length);
    return {
      data: [Buffer.from(data).toString('base64'), 'base64'],
      executable: false,
      lamports: 1,
      owner: this.owner.toBase58(),
      rentEpoch: 0,
      space,
    };
  }

  private nonceAccount({ authority, value }: { authority: PublicKey; value: string }, slice: AccountReadConfig['dataSlice']): EncodedAccount {
    this.slot += this.slotsPerNonceRead;
    const data = encodeNonceState({
      version: CURRENT_NONCE_VERSION,
      state: 'initialized',
      authority: authority.toBase58(),
      durableNonce: value,
      lamportsPerSignature: 5_000n,
    });
    const cut = slice === undefined ? data : data.subarray(slice.offset, slice.offset + slice.length);
    return {
      data: [Buffer.from(cut).toString('base64'), 'base64'],
      executable: false,
      lamports: NONCE_ACCOUNT_RENT_LAMPORTS,
      owner: SystemProgram.programId.toBase58(),
      rentEpoch: 0,
      space: NONCE_ACCOUNT_SIZE,
    };
  }

  /** A fresh durable nonce value. */
  static nonceValue(): string {
    return bs58.encode(Keypair.generate().publicKey.toBytes());
  }

  private accountSize(state: TrackerState): number {
    return TRACKER_HEADER_SIZE + Number(state.header.capacity) * entrySizeOf(state);
  }

  private sendTransaction(params: unknown[]): Reply {
    const [wire, config] = params as [string, { skipPreflight?: boolean }];
    const transaction = Transaction.from(Buffer.from(wire, 'base64'));
    const signature = bs58.encode(transaction.signature ?? new Uint8Array(64));
    const skipPreflight = config.skipPreflight === true;
    const record = { signature, wire, skipPreflight, count: this.sends.filter((send) => send.signature === signature).length + 1 };
    this.sends.push(record);
    const fault = this.onSend(record);
    if (fault === 'ignore') return { result: signature };
    if (fault === 'ignore-and-drop-response') return { drop: true };
    const reply = this.process(transaction, signature, skipPreflight);
    if (fault === 'gateway-timeout') return { http: 504 };
    return fault === 'drop-response' ? { drop: true } : reply;
  }

  /** getTransaction of a transaction that landed here: its bytes as sent and the units it consumed, as a node reports them. */
  private landedTransaction(signature: string) {
    const status = this.statuses.get(signature);
    const sent = this.sends.find((send) => send.signature === signature);
    if (status === undefined || sent === undefined) return null;
    const meta = { err: status.err, fee: 5_000, computeUnitsConsumed: this.budgets.get(signature)?.unitsConsumed ?? 0 };
    return { slot: status.slot, blockTime: null, meta, transaction: [sent.wire, 'base64'] };
  }

  private simulateTransaction(params: unknown[]): Reply {
    const config = params[1] as { minContextSlot?: number };
    const slot = this.slot - this.confirmedLag;
    if (config.minContextSlot !== undefined && config.minContextSlot > slot) return MIN_CONTEXT_SLOT_NOT_REACHED;
    const transaction = Transaction.from(Buffer.from(params[0] as string, 'base64'));
    const { err, unitsConsumed } = this.execute(transaction);
    return { result: { context: { slot }, value: { err, logs: [], accounts: null, unitsConsumed, returnData: null } } };
  }

  private process(transaction: Transaction, signature: string, skipPreflight: boolean): Reply {
    if (!transaction.verifySignatures()) return { error: { code: -32003, message: 'Transaction signature verification failure' } };
    const preflightError = (err: unknown): Reply => ({ error: { code: -32002, message: 'Transaction simulation failed', data: { err, logs: [] } } });
    if (this.statuses.has(signature) || this.forked.has(signature)) return skipPreflight ? { result: signature } : preflightError('AlreadyProcessed');
    const nonce = this.nonceOf(transaction);
    const lastValid = this.blockhashes.get(transaction.recentBlockhash ?? '');
    const valid = nonce === undefined ? lastValid !== undefined && this.blockHeight <= lastValid : nonce.value === transaction.recentBlockhash;
    if (!valid) return skipPreflight ? { result: signature } : preflightError('BlockhashNotFound');
    const outcome = this.execute(transaction);
    if (outcome.err !== null && !skipPreflight) return preflightError(outcome.err);
    if (budgetOf(transaction).price < this.clearingPrice) return { result: signature };
    if (this.forkLandings > 0) {
      // Processed on a fork the cluster abandons: nothing of it reaches the confirmed bank.
      this.forkLandings -= 1;
      this.slot += 1;
      this.forked.set(signature, { slot: this.slot, pollsLeft: this.forkPolls });
      return { result: signature };
    }
    if (outcome.err === null) this.tracker = outcome.state;
    if (nonce !== undefined) nonce.value = FakeChain.nonceValue();
    if (outcome.err === null) this.initializeNonces(transaction);
    this.slot += 1;
    this.statuses.set(signature, { err: outcome.err, slot: this.slot });
    const { unitLimit, price, loadedAccountsBytes } = budgetOf(transaction);
    this.budgets.set(signature, { unitLimit, price, unitsConsumed: outcome.unitsConsumed, loadedAccountsBytes });
    return { result: signature };
  }

  /** InitializeNonceAccount makes its account a nonce account (CreateAccountWithSeed before it is taken as done). */
  private initializeNonces(transaction: Transaction): void {
    for (const instruction of transaction.instructions) {
      if (!instruction.programId.equals(SystemProgram.programId) || instruction.data.readUInt32LE(0) !== INITIALIZE_NONCE) continue;
      const authority = new PublicKey(instruction.data.subarray(4, 36));
      this.nonces.set(instruction.keys[0]!.pubkey.toBase58(), { authority, value: FakeChain.nonceValue() });
    }
  }

  /** The nonce a transaction advances first, when it is a durable-nonce transaction. */
  private nonceOf(transaction: Transaction): { authority: PublicKey; value: string } | undefined {
    const [first] = transaction.instructions;
    if (first === undefined || !first.programId.equals(SystemProgram.programId) || first.data.readUInt32LE(0) !== ADVANCE_NONCE) return undefined;
    return this.nonces.get(first.keys[0]!.pubkey.toBase58());
  }

  /** All or nothing: returns the new state, or the first failing instruction's error, and the units consumed. */
  private execute(transaction: Transaction): { err: unknown; state: TrackerState; unitsConsumed: number } {
    const state = structuredClone(this.tracker);
    const signer = transaction.feePayer?.toBase58() ?? '';
    const { unitLimit, loadedAccountsBytes } = budgetOf(transaction);
    if (this.loadedAccountsBytes !== undefined && this.loadedAccountsBytes > loadedAccountsBytes) {
      return { err: 'MaxLoadedAccountsDataSizeExceeded', state, unitsConsumed: 0 };
    }
    let unitsConsumed = 0;
    for (const [k, instruction] of transaction.instructions.entries()) {
      const builtin = instruction.programId.equals(ComputeBudgetProgram.programId) || instruction.programId.equals(SystemProgram.programId);
      unitsConsumed += builtin ? BUILTIN_INSTRUCTION_UNITS : this.unitsPerInstruction;
      if (unitsConsumed > unitLimit) return { err: { InstructionError: [k, 'ComputationalBudgetExceeded'] }, state, unitsConsumed: unitLimit };
      if (builtin) continue;
      const failure = applyInstruction(
        state,
        signer,
        instruction.data,
        instruction.keys.map((key) => key.pubkey.toBase58()),
      );
      if (failure !== undefined) return { err: { InstructionError: [k, { Custom: PROGRAM_ERRORS[failure] }] }, state, unitsConsumed };
    }
    return { err: null, state, unitsConsumed };
  }
}

interface AccountReadConfig {
  commitment?: string;
  dataSlice?: { offset: number; length: number };
  minContextSlot?: number;
}

interface EncodedAccount {
  data: [string, 'base64'];
  executable: boolean;
  lamports: number;
  owner: string;
  rentEpoch: number;
  space: number;
}

const MIN_CONTEXT_SLOT_NOT_REACHED: Reply = { error: { code: -32016, message: 'Minimum context slot has not been reached' } };

const BUILTIN_INSTRUCTION_UNITS = 150;
const ADVANCE_NONCE = 4;
const INITIALIZE_NONCE = 6;

/** The transaction's limits and price as the runtime reads them (PROTOCOL.md), as the devnet reads them. */
function budgetOf(transaction: { instructions: TransactionInstruction[] }): { unitLimit: number; price: number; loadedAccountsBytes: number } {
  const { unitLimit, unitPrice, loadedAccountsBytes } = readComputeBudget(
    transaction.instructions.map((ix) => ({ programId: ix.programId.toBase58(), data: ix.data })),
  );
  return { unitLimit, price: Number(unitPrice), loadedAccountsBytes };
}

function applyInstruction(state: TrackerState, signer: string, data: Uint8Array, keys: string[]): ProgramErrorName | undefined {
  const ix = decodeInstructionData(data);
  if (ix.name === 'cleanup_deposit') {
    const index = Number(ix.index);
    const entry = state.entries[index] as DepositEntry | undefined;
    if (index >= Number(state.header.entryCount) || entry === undefined) return 'EntryNotFound';
    if (keys[2] !== entry.depositor) return 'InvalidAccount';
    if (entry.status !== 'Finalized') return 'EntryNotFinalized';
    if (entry.cleanupCompleted) return 'CleanupAlreadyCompleted';
    entry.cleanupCompleted = true;
    return undefined;
  }
  if (ix.name !== 'ack_deposit' && ix.name !== 'ack_withdraw') throw new Error(`FakeChain does not model ${ix.name}`);
  const slot = state.header.authorities.indexOf(signer);
  const vote = state.header.votes[slot];
  if (vote === undefined) return 'NotAnAuthority';
  if (ix.index !== vote.nextIndex) return 'VoteOutOfOrder';
  if (ix.name === 'ack_withdraw' && ix.index >= state.header.entryCount) return 'EntryNotFound';
  if (ix.name === 'ack_deposit' && ix.index === state.header.entryCount) {
    state.entries[Number(ix.index)] = votingEntry(ix.amount, ix.recipient, ix.sourceMint);
    state.header.entryCount += 1n;
  }
  vote.nextIndex = ix.index + 1n;
  vote.lastVote = ix.approve ? 'Yes' : 'No';
  return undefined;
}

export function votingEntry(amount: bigint, recipient: string, sourceMint: string): WithdrawEntry {
  return {
    status: 'Voting',
    createdTokenAccount: 'Pending',
    yesVotes: 1,
    noVotes: 0,
    amount,
    recipient,
    sourceMint,
    result: { kind: 'None' },
    tokenAccount: PublicKey.default.toBase58(),
    finalizedSlot: 0n,
  };
}

function entrySizeOf(state: TrackerState): number {
  return state.header.kind === 'DepositTracker' ? DEPOSIT_ENTRY_SIZE : WITHDRAW_ENTRY_SIZE;
}

/** Bytes `offset .. offset+length` of the account, encoding only the entries the slice touches. */
export function renderSlice(state: TrackerState, offset: number, length: number): Uint8Array {
  const size = entrySizeOf(state);
  const accountSize = TRACKER_HEADER_SIZE + Number(state.header.capacity) * size;
  const end = Math.min(offset + length, accountSize);
  const out = new Uint8Array(Math.max(0, end - offset));
  const header = encodeTrackerHeader(state.header);
  copyOverlap(out, offset, header, 0);
  const first = Math.max(0, Math.floor((offset - TRACKER_HEADER_SIZE) / size));
  const last = Math.min(state.entries.length, Math.ceil((end - TRACKER_HEADER_SIZE) / size));
  for (let i = first; i < last; i++) {
    const entry = state.entries[i];
    if (entry === undefined) continue;
    const bytes = state.header.kind === 'DepositTracker' ? encodeDepositEntry(entry as DepositEntry) : encodeWithdrawEntry(entry as WithdrawEntry);
    copyOverlap(out, offset, bytes, TRACKER_HEADER_SIZE + i * size);
  }
  return out;
}

function copyOverlap(out: Uint8Array, outStart: number, part: Uint8Array, partStart: number): void {
  const from = Math.max(outStart, partStart);
  const to = Math.min(outStart + out.length, partStart + part.length);
  if (from < to) out.set(part.subarray(from - partStart, to - partStart), from - outStart);
}
