import type { PublicKey } from '@solana/web3.js';
import { decodeInstructionData, type BridgeInstruction } from '../../src/chain/codec/instructions.js';
import type { ChainPair, DevnetNode } from '../../devnet/index.js';
import { readBridgeState, type BridgeState, type TrackerAddresses } from './snapshot.js';

/**
 * Every transaction the two chains land, in landing order, with the state of both trackers
 * just before and just after it: the chain's side of the story, which the invariants compare
 * the cranks' behaviour and reports against.
 *
 * The devnet has no typed log of landed transactions, so the ledger watches `bank.submit`,
 * the one entry point through which the node's JSON-RPC hands a transaction to the block
 * producer; a transaction lands synchronously inside it (block production is never paused
 * here), so the snapshots around the call are exactly that transaction's before and after.
 * Landing itself is read from the bank's signature statuses. Each landed transaction (and each
 * airdrop) makes one block, so the ledger also accounts for every slot: a block it cannot
 * attribute is reported instead of silently missing from the checks.
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
  /** The bridge program's instructions, decoded. */
  instructions: BridgeInstruction[];
  before: BridgeState;
  after: BridgeState;
}

type Submit = DevnetNode['bank']['submit'];

export class Ledger {
  readonly records: LedgerRecord[] = [];
  /** Problems the ledger itself found (an unattributed block); reported by the invariants. */
  readonly anomalies: string[] = [];
  private readonly nodes: Record<ChainSide, DevnetNode>;
  private readonly expectedSlot: Record<ChainSide, number>;
  private readonly originals: Array<{ node: DevnetNode; submit: Submit }> = [];
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

  /** Lets time pass on one chain: `count` empty blocks (blockhashes age, pending transactions can expire). */
  advanceSlots(chain: ChainSide, count: number): void {
    this.nodes[chain].advanceSlots(count);
    this.expectedSlot[chain] += count;
  }

  /** Blocks on either chain that no landed transaction or advanceSlots explains. */
  unattributedBlocks(): string[] {
    return (['source', 'target'] as const)
      .filter((chain) => this.nodes[chain].slot !== this.expectedSlot[chain])
      .map((chain) => `the ${chain} chain is at slot ${this.nodes[chain].slot}, the ledger accounts for ${this.expectedSlot[chain]}`);
  }

  /** Puts the banks back as they were. */
  close(): void {
    for (const { node, submit } of this.originals.splice(0)) node.bank.submit = submit;
  }

  private watch(chain: ChainSide): void {
    const node = this.nodes[chain];
    const bank = node.bank;
    const submit: Submit = bank.submit.bind(bank);
    this.originals.push({ node, submit });
    bank.submit = (tx, signaturesVerified) => {
      const known = bank.signatureStatus(tx.signature) !== undefined;
      const slotBefore = node.slot;
      const before = this.state();
      submit(tx, signaturesVerified);
      const status = bank.signatureStatus(tx.signature);
      const landed = !known && status !== undefined;
      if (node.slot !== slotBefore + (landed ? 1 : 0)) {
        this.anomalies.push(`${chain} slot moved ${slotBefore} -> ${node.slot} around transaction ${tx.signature} (landed: ${landed})`);
      }
      if (!landed) return;
      this.expectedSlot[chain] += 1;
      this.records.push({
        seq: this.records.length,
        chain,
        signature: tx.signature,
        slot: status.slot,
        err: status.err,
        feePayer: tx.accountKeys[0]!,
        fee: bank.feeFor(tx),
        instructions: this.bridgeInstructions(tx.accountKeys, tx.instructions),
        before,
        after: this.state(),
      });
    };
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
