import type { PublicKey } from '@solana/web3.js';
import { decodeInstructionData, type BridgeInstruction } from '../../src/chain/codec/instructions.js';
import type { ChainPair, DevnetNode } from '../../devnet/index.js';
import { readBridgeState, type BridgeState, type TrackerAddresses } from './snapshot.js';

/**
 * Every transaction the two chains land, in landing order, with the state of both trackers
 * just before and just after it: the chain's side of the story, which the invariants compare
 * the cranks' behaviour and reports against.
 *
 * The devnet has no typed log of landed transactions, so the ledger watches the calls through
 * which anything can land: `bank.submit` (the one entry point through which the node's
 * JSON-RPC hands a transaction to the block producer), `advanceSlots` (a block can land a
 * transaction that was in flight, `landAfterSlots`) and fault changes (a price floor that
 * falls lands the transactions waiting below it). Block production is never paused here and no
 * timer makes blocks, so everything lands synchronously inside one of these calls. Several
 * transactions can land in one call (each in a block of its own); the bank's public
 * `isBlockhashValid` is asked exactly once per landing, after the transaction passed every
 * check and before it executes, so the ledger takes the trackers' state there: the state after
 * the previous landing and before this one. Landing itself, and the order, is read from the
 * bank's signature statuses (one slot per landing). Each landed transaction (and each airdrop)
 * makes one block, so the ledger also accounts for every slot: a block it cannot attribute, or
 * a landing count that differs from the snapshots taken, is reported instead of silently
 * missing from the checks.
 */

export type ChainSide = 'source' | 'target';

export interface LedgerRecord {
  /** Landing order across both chains, from 0. */
  seq: number;
  chain: ChainSide;
  signature: string;
  slot: number;
  /** null when the instructions executed; otherwise the transaction error (fee charged, no state change). */
  err: unknown;
  feePayer: string;
  fee: bigint;
  /** The compute-unit price it bid (micro-lamports per CU). */
  unitPrice: bigint;
  /** The bridge program's instructions, decoded. */
  instructions: BridgeInstruction[];
  before: BridgeState;
  after: BridgeState;
  /**
   * The trackers when it was first sent: the view its votes were cast on. A later send of the
   * same bytes (a rebroadcast, or a new life signing the same plan against the same nonce value)
   * does not change it.
   */
  sent: BridgeState;
}

type Bank = DevnetNode['bank'];
type Submit = Bank['submit'];
type Submitted = Parameters<Submit>[0];

export class Ledger {
  readonly records: LedgerRecord[] = [];
  /** Problems the ledger itself found (an unattributed block); reported by the invariants. */
  readonly anomalies: string[] = [];
  /** Transactions that landed in a later call than their own send (in flight, or waiting below a price floor). */
  lateLandings = 0;
  /** Versions sent at a higher price under a blockhash or nonce value the same payer already sent under (re-pricing). */
  repricedVersions = 0;
  /** Per chain, fee payer and recent blockhash (or nonce value): the prices sent. */
  private readonly prices = new Map<string, Set<bigint>>();
  private readonly nodes: Record<ChainSide, DevnetNode>;
  private readonly expectedSlot: Record<ChainSide, number>;
  /** Submitted transactions the bank had no status for, until they land: what a later call may land. */
  private readonly unlanded: Record<ChainSide, Map<string, Submitted>> = { source: new Map(), target: new Map() };
  /** The trackers when each unlanded transaction was first sent. */
  private readonly sentStates = new Map<string, BridgeState>();
  private readonly restore: Array<() => void> = [];
  /** The chain whose watched call is running, and the trackers' state before each landing in it. */
  private watching: { chain: ChainSide; before: BridgeState[]; sent: string | undefined } | undefined;
  private cached: { key: string; state: BridgeState } | undefined;

  constructor(
    pair: ChainPair,
    private readonly trackers: TrackerAddresses,
    private readonly programId: PublicKey,
  ) {
    this.nodes = { source: pair.source, target: pair.target };
    this.expectedSlot = { source: pair.source.slot, target: pair.target.slot };
    for (const chain of ['source', 'target'] as const) this.watch(chain);
  }

  /** Both trackers now. */
  state(): BridgeState {
    const key = `${this.nodes.source.slot}:${this.nodes.target.slot}`;
    if (this.cached?.key !== key) this.cached = { key, state: readBridgeState(this.nodes.source, this.nodes.target, this.trackers) };
    return this.cached.state;
  }

  /** Lets time pass on one chain: `count` empty blocks (blockhashes age, pending transactions can expire, in-flight ones land). */
  advanceSlots(chain: ChainSide, count: number): void {
    this.during(chain, count, () => this.nodes[chain].advanceSlots(count));
  }

  /** Runs `change` (a fault change on `chain`: a falling price floor lands what waited below it) and records what landed in it. */
  during(chain: ChainSide, emptyBlocks: number, change: () => void, sent?: string): void {
    if (this.watching !== undefined) throw new Error(`the ledger is already watching a call on the ${this.watching.chain} chain`);
    const node = this.nodes[chain];
    const slotBefore = node.slot;
    const watching = { chain, before: [] as BridgeState[], sent };
    this.watching = watching;
    try {
      change();
    } finally {
      this.watching = undefined;
    }
    const landed = this.recordLandings(chain, watching.before, sent);
    this.expectedSlot[chain] += emptyBlocks + landed;
    if (node.slot !== slotBefore + emptyBlocks + landed) {
      this.anomalies.push(
        `${chain} slot moved ${slotBefore} -> ${node.slot} in a call that landed ${landed} transaction(s) and made ${emptyBlocks} empty block(s)`,
      );
    }
  }

  /** Signatures of transactions `key` paid for that were sent and have not landed (in flight, waiting below a price floor, dropped). */
  unlandedFrom(key: string): string[] {
    return (['source', 'target'] as const).flatMap((chain) =>
      [...this.unlanded[chain].values()].filter((tx) => tx.accountKeys[0] === key).map((tx) => tx.signature),
    );
  }

  /** Blocks on either chain that no landed transaction or advanceSlots explains. */
  unattributedBlocks(): string[] {
    return (['source', 'target'] as const)
      .filter((chain) => this.nodes[chain].slot !== this.expectedSlot[chain])
      .map((chain) => `the ${chain} chain is at slot ${this.nodes[chain].slot}, the ledger accounts for ${this.expectedSlot[chain]}`);
  }

  /** Puts the banks back as they were. */
  close(): void {
    for (const undo of this.restore.splice(0)) undo();
  }

  private watch(chain: ChainSide): void {
    const bank = this.nodes[chain].bank;
    const submit: Submit = bank.submit.bind(bank);
    const isBlockhashValid = bank.isBlockhashValid.bind(bank);
    this.restore.push(() => {
      bank.submit = submit;
      bank.isBlockhashValid = isBlockhashValid;
    });
    bank.isBlockhashValid = (blockhash) => {
      if (this.watching?.chain === chain) this.watching.before.push(this.state());
      return isBlockhashValid(blockhash);
    };
    bank.submit = (tx, signaturesVerified, landAfterSlots) => {
      if (bank.signatureStatus(tx.signature) === undefined && !this.unlanded[chain].has(tx.signature)) {
        this.unlanded[chain].set(tx.signature, tx);
        this.sentStates.set(tx.signature, this.state());
        this.notePrice(chain, tx);
      }
      this.during(chain, 0, () => submit(tx, signaturesVerified, landAfterSlots), tx.signature);
    };
  }

  private notePrice(chain: ChainSide, tx: Submitted): void {
    const key = `${chain}|${tx.accountKeys[0]}|${tx.recentBlockhash}`;
    const prices = this.prices.get(key) ?? new Set<bigint>();
    if (prices.size > 0 && ![...prices].some((price) => price >= tx.budget.unitPrice)) this.repricedVersions += 1;
    prices.add(tx.budget.unitPrice);
    this.prices.set(key, prices);
  }

  /**
   * The transactions of `chain` that landed in the call just watched, in landing order (one
   * slot each), each between the state taken before it and the one before the next landing.
   */
  private recordLandings(chain: ChainSide, before: BridgeState[], sent: string | undefined): number {
    const bank = this.nodes[chain].bank;
    const landed = [...this.unlanded[chain].values()]
      .flatMap((tx) => {
        const status = bank.signatureStatus(tx.signature);
        return status === undefined ? [] : [{ tx, status }];
      })
      .sort((a, b) => a.status.slot - b.status.slot);
    if (landed.length !== before.length) {
      this.anomalies.push(`${chain}: ${landed.length} transaction(s) landed in one call, the bank began ${before.length} landing(s)`);
    }
    const after = this.state();
    landed.forEach(({ tx, status }, k) => {
      this.unlanded[chain].delete(tx.signature);
      const sentState = this.sentStates.get(tx.signature);
      this.sentStates.delete(tx.signature);
      if (tx.signature !== sent) this.lateLandings += 1;
      this.records.push({
        seq: this.records.length,
        chain,
        signature: tx.signature,
        slot: status.slot,
        err: status.err,
        feePayer: tx.accountKeys[0]!,
        fee: bank.feeFor(tx),
        unitPrice: tx.budget.unitPrice,
        instructions: this.bridgeInstructions(tx.accountKeys, tx.instructions),
        before: before[k] ?? after,
        after: before[k + 1] ?? after,
        sent: sentState ?? before[k] ?? after,
      });
    });
    return landed.length;
  }

  private bridgeInstructions(accountKeys: readonly string[], instructions: ReadonlyArray<{ programIdIndex: number; data: Uint8Array }>) {
    const program = this.programId.toBase58();
    return instructions.filter((ix) => accountKeys[ix.programIdIndex] === program).map((ix) => decodeInstructionData(ix.data));
  }
}

/** Transactions `key` paid for that the chains landed (executed or failed: the fee was charged either way), on both chains. */
export function landedFrom(records: readonly LedgerRecord[], key: string): LedgerRecord[] {
  return records.filter((record) => record.feePayer === key);
}
