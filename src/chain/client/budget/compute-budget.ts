import { ComputeBudgetProgram, PublicKey, Transaction, type TransactionError, type TransactionInstruction } from '@solana/web3.js';
import type { ChainSide, CrankAction } from '../../../domain.js';
import { DEFAULT_UNITS_PER_INSTRUCTION } from '../../fee-rate.js';
import { MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES, setLoadedAccountsDataSizeLimitInstruction } from '../../codec/compute-budget.js';
import { runtimeInstructionError } from '../../program-errors.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import type { Logger } from '../../../log/logger.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { LoadedAccounts } from './loaded-accounts.js';

/**
 * The compute budget of a crank transaction (PROTOCOL.md "Compute units and fees"). Every crank
 * transaction starts with SetComputeUnitLimit, SetComputeUnitPrice and
 * SetLoadedAccountsDataSizeLimit (sized by ./loaded-accounts.ts). The limit is measured,
 * never assumed (a program upgrade changes what an instruction costs): the exact instructions
 * are simulated under the largest limit, and the limit is what they consumed plus
 * COMPUTE_UNIT_MARGIN. A batch that does not fit is cut to what does and the rest goes in the
 * next transaction; the priority part of the fee is paid on the requested limit, so a measured
 * limit costs a fraction of the default reservation (200,000 CU per instruction).
 *
 * A simulation is one node's word, so it cannot set the limit alone: the limit is also bounded
 * by what the chain has shown these instructions cost (`ComputeCeilings`), and a simulation
 * above that ceiling moves it only when a second endpoint's simulation agrees. A simulation that
 * fails (other than by running out of compute, which cuts the batch) is a refusal: nothing is
 * signed.
 */

/** The largest limit a transaction may request; a larger request is clamped by the runtime. */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;

/**
 * Added to the simulated units: the state can change between the simulation and the landing
 * (another vote, a finalization), and an instruction's path with it. 15 % keeps a request within
 * 1.15x of its use (the issue asks at most about 1.2x) while leaving room for a branch that
 * costs more than the simulated one.
 */
export const COMPUTE_UNIT_MARGIN = 0.15;

/** SetComputeUnitLimit, SetComputeUnitPrice and SetLoadedAccountsDataSizeLimit lead every crank transaction. */
export const BUDGET_INSTRUCTION_COUNT = 3;

// Any blockhash does: the node replaces it (replaceRecentBlockhash) before it simulates.
const SIMULATION_BLOCKHASH = PublicKey.default.toBase58();

export interface ComputeBudget {
  /** SetComputeUnitLimit: the units requested. */
  unitLimit: number;
  /** SetComputeUnitPrice: micro-lamports per CU. */
  microLamportsPerUnit: number;
  /** SetLoadedAccountsDataSizeLimit: the bytes the transaction's accounts load, at most 64 MiB. */
  loadedAccountsBytes: number;
  /** What the simulation of these instructions consumed. */
  unitsConsumed: number;
}

/** The instructions that lead a transaction with this budget. */
export function budgetInstructions(budget: Omit<ComputeBudget, 'unitsConsumed'>): TransactionInstruction[] {
  return [
    ComputeBudgetProgram.setComputeUnitLimit({ units: budget.unitLimit }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: budget.microLamportsPerUnit }),
    setLoadedAccountsDataSizeLimitInstruction(budget.loadedAccountsBytes),
  ];
}

/** The budget instructions as the byte count sees them: their size does not depend on their values. */
export const BUDGET_SIZE_PREFIX: readonly TransactionInstruction[] = budgetInstructions({
  unitLimit: 0,
  microLamportsPerUnit: 0,
  loadedAccountsBytes: 0,
});

/** The limit to request for `count` instructions that consumed `unitsConsumed`, at most `count` x the ceiling. */
function unitLimitFor(unitsConsumed: number, count: number, ceilingPerInstruction: number): number {
  return Math.min(MAX_COMPUTE_UNIT_LIMIT, count * ceilingPerInstruction, Math.ceil(unitsConsumed * (1 + COMPUTE_UNIT_MARGIN)));
}

/**
 * A landed transaction may ask at most this many times the units per instruction of the
 * smallest limit under which the action's instructions have landed, when the units they
 * consumed are not known (no endpoint keeps history): an instruction's path (and so its cost)
 * varies with the state, and 2x covers that while bounding what a node's inflated simulation
 * can make a transaction pay for (about 2.3x the real use, with the margin) once an honest
 * simulation set a limit; a limit a lying simulation set teaches nothing.
 */
const CEILING_HEADROOM = 2;

/**
 * A transaction may ask at most this many times the units per instruction that the action's
 * own landed transactions consumed (getTransaction `meta.computeUnitsConsumed`, the chain's
 * count, not a simulation's): after one landing, whatever a simulation says, a transaction asks
 * at most 3x what the landed one used per instruction, under 4x its own use as long as its
 * instructions cost what the landed ones did (the budget instructions' 450 units, spread over
 * the landed transaction's instructions, stay within that); an instruction whose path costs
 * more than 3x runs out of compute, pays its fee and raises the ceiling (`exceeded`).
 */
export const USED_HEADROOM = 3;

/**
 * After the chain ran the action's instructions out of compute under the ceiling (a program
 * upgrade made them dearer), the ceiling becomes this many times the limit per instruction
 * that was not enough: a 6x dearer program lands after one such failure.
 */
const CEILING_GROWTH = 4;

/**
 * What the chain has shown each action's instructions cost, per chain: the ceiling on a
 * transaction's limit per instruction. It starts at the runtime's own reservation without a
 * limit (DEFAULT_UNITS_PER_INSTRUCTION), falls with each of the action's transactions that
 * lands to USED_HEADROOM x the units per instruction it consumed (`used`; CEILING_HEADROOM x
 * its limit per instruction when that is not known: `landed`), and rises by
 * CEILING_GROWTH only when a transaction is refused or lands for running out of compute.
 * Never above MAX_COMPUTE_UNIT_LIMIT. A preflight refusal is a node's simulation: a node that
 * lies there raises the ceiling to that bound after two refused attempts, so a transaction then
 * pays at most the cap on MAX_COMPUTE_UNIT_LIMIT (docs/chain-client.md, "Compute budget and
 * priority fees"); plannedFees prices a plan on the same ceiling.
 */
export class ComputeCeilings {
  readonly #perInstruction = new Map<CrankAction, number>();
  /** Per action, the largest limit per instruction the chain showed too small (`exceeded`): no report of use can bring the ceiling to it again. */
  readonly #tooSmall = new Map<CrankAction, number>();

  /** `reported`: where a contradicted count is told (a warn line and `bridge_compute_use_ignored_total`); tests leave it out. */
  constructor(private readonly reported?: { chain: ChainSide; logger: Logger; metrics: Metrics }) {}

  perInstruction(action: CrankAction): number {
    return this.#perInstruction.get(action) ?? DEFAULT_UNITS_PER_INSTRUCTION;
  }

  /**
   * `count` instructions of `action` landed within `unitLimit` and, a node says, consumed
   * `unitsConsumed` (the whole transaction). The ceiling falls to USED_HEADROOM x that per
   * instruction. A count the chain contradicts (more than the limit, or a use that would put the
   * ceiling at or under a limit per instruction the chain has shown too small) is one node's
   * word against the chain's: a warn line, and the ceiling learns from the limit instead.
   */
  used(action: CrankAction, { unitsConsumed, unitLimit, count }: { unitsConsumed: number; unitLimit: number; count: number }): void {
    const shown = Math.ceil((USED_HEADROOM * unitsConsumed) / count);
    const tooSmall = this.#tooSmall.get(action) ?? 0;
    if (unitsConsumed === 0 || unitsConsumed > unitLimit || shown <= tooSmall) {
      this.reported?.metrics.computeUseIgnored.inc({ chain: this.reported.chain });
      this.reported?.logger.warn(
        { action, unitsConsumed, unitLimit, count },
        "a landed transaction's reported compute use contradicts its limit or an earlier ComputationalBudgetExceeded: ignored, the ceiling learns from the limit",
      );
      this.landed(action, unitLimit, count);
      return;
    }
    this.#perInstruction.set(action, Math.min(this.perInstruction(action), shown));
  }

  /** `count` instructions of `action` ran within `unitLimit`. */
  landed(action: CrankAction, unitLimit: number, count: number): void {
    const shown = Math.ceil((CEILING_HEADROOM * unitLimit) / count);
    this.#perInstruction.set(action, Math.min(this.perInstruction(action), shown));
  }

  /** Two endpoints' simulations agree that `count` instructions of `action` need `unitLimit`. */
  agreed(action: CrankAction, unitLimit: number, count: number): void {
    const needed = Math.ceil(unitLimit / count);
    this.#perInstruction.set(action, Math.min(MAX_COMPUTE_UNIT_LIMIT, Math.max(this.perInstruction(action), needed)));
  }

  /** `count` instructions of `action` ran out of compute under `unitLimit`. */
  exceeded(action: CrankAction, unitLimit: number, count: number): void {
    this.#tooSmall.set(action, Math.max(this.#tooSmall.get(action) ?? 0, Math.floor(unitLimit / count)));
    const grown = Math.ceil((CEILING_GROWTH * unitLimit) / count);
    this.#perInstruction.set(action, Math.min(MAX_COMPUTE_UNIT_LIMIT, Math.max(this.perInstruction(action), grown)));
  }
}

/**
 * The position among `instructions` (after the budget instructions) of the one that passed the
 * limit, when `err` is `{"InstructionError":[i,"ComputationalBudgetExceeded"]}`.
 */
function budgetExceededAt(err: unknown, leading: number): number | undefined {
  const instructionError = runtimeInstructionError(err);
  if (instructionError === undefined || instructionError[1] !== 'ComputationalBudgetExceeded') return undefined;
  return Math.max(0, instructionError[0] - leading);
}

/** How many of the leading instructions go in this transaction (at least 1) and its budget; or the simulation's refusal. */
export type MeasuredBatch = { count: number; budget: ComputeBudget } | { count: number; refusal: TransactionError };

export interface MeasureInput {
  rpc: ChainRpc;
  feePayer: PublicKey;
  /** Instructions before the budget's in the signed transaction (AdvanceNonceAccount in nonce mode): measured with the rest. */
  leading: readonly TransactionInstruction[];
  /** Instructions that fit one transaction by bytes, in order. */
  instructions: readonly TransactionInstruction[];
  microLamportsPerUnit: number;
  /** Take at most this many (a send that met ComputationalBudgetExceeded halves it). */
  maxCount?: number;
  /** The chain's ceilings: the most units per instruction of `action` the limit may ask. */
  ceilings: ComputeCeilings;
  action: CrankAction;
  /** What the chain's accounts load: the SetLoadedAccountsDataSizeLimit of each probe. */
  loaded: LoadedAccounts;
}

/** Most simulations one transaction's measurement makes, a second opinion included (the attempt's deadline counts them). */
export const MAX_SIMULATIONS = 4;

/**
 * How many of the leading instructions fit one transaction's compute, and its budget. Each
 * simulation either fits or cuts the batch (to the instruction that passed the limit, or in
 * proportion to the overshoot): in practice one simulation, or two when the batch is cut, and
 * never more than MAX_SIMULATIONS; past them one instruction goes under the largest limit the
 * ceiling allows and the 64 MiB loaded-accounts default. A simulation that wants more than the
 * ceiling asks a second endpoint once (`secondOpinion`): the ceiling moves only when both
 * agree. A probe that loads more than its counted limit (`MaxLoadedAccountsDataSizeExceeded`:
 * an account holds more than the crank counted) is simulated again under the 64 MiB default,
 * which the transaction then asks. One instruction that alone passes the largest limit, or any
 * other simulation error, is a refusal: the failure policy judges it (ComputationalBudgetExceeded
 * is tried again: an upgrade may be rolling out).
 */
export async function measureBatch(input: MeasureInput, signal: AbortSignal): Promise<MeasuredBatch> {
  const { rpc, feePayer, leading, instructions, microLamportsPerUnit, ceilings, action, loaded } = input;
  let count = Math.min(instructions.length, input.maxCount ?? instructions.length);
  let counted = true;
  let askedElsewhere = false;
  for (let simulations = 0; simulations < MAX_SIMULATIONS; simulations++) {
    const batch = instructions.slice(0, count);
    const loadedAccountsBytes = counted
      ? loaded.limitFor(feePayer, [...leading, ...BUDGET_SIZE_PREFIX, ...batch])
      : MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES;
    const wire = unsignedWire(
      [...leading, ...budgetInstructions({ unitLimit: MAX_COMPUTE_UNIT_LIMIT, microLamportsPerUnit, loadedAccountsBytes }), ...batch],
      feePayer,
    );
    const simulation = await rpc.simulateTransaction(wire, signal);
    const { err } = simulation;
    if (err === LOADED_ACCOUNTS_EXCEEDED && loadedAccountsBytes < MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES) {
      loaded.exceeded();
      counted = false;
      continue;
    }
    const exceededAt = budgetExceededAt(err, leading.length + BUDGET_INSTRUCTION_COUNT);
    if (err !== null && (exceededAt === undefined || count === 1)) return { count, refusal: err };
    let { unitsConsumed } = simulation;
    if (err === null && !askedElsewhere && simulations + 1 < MAX_SIMULATIONS && asked(unitsConsumed) > count * ceilings.perInstruction(action)) {
      askedElsewhere = true;
      const second = await rpc.simulateTransactionElsewhere(wire, simulation.endpoint, signal);
      if (second !== undefined) simulations += 1;
      unitsConsumed = secondOpinion(simulation, second, { count, ceilings, action });
    }
    const ceilingPerInstruction = ceilings.perInstruction(action);
    const wanted = Math.min(asked(unitsConsumed), count * ceilingPerInstruction);
    if (exceededAt === undefined && (wanted <= MAX_COMPUTE_UNIT_LIMIT || count === 1)) {
      const unitLimit = unitLimitFor(unitsConsumed, count, ceilingPerInstruction);
      return { count, budget: { unitLimit, microLamportsPerUnit, unitsConsumed, loadedAccountsBytes } };
    }
    const fits = exceededAt ?? Math.floor((count * MAX_COMPUTE_UNIT_LIMIT) / wanted);
    count = Math.max(1, Math.min(count - 1, fits));
  }
  const unitLimit = Math.min(MAX_COMPUTE_UNIT_LIMIT, ceilings.perInstruction(action));
  return {
    count: 1,
    budget: { unitLimit, microLamportsPerUnit, unitsConsumed: unitLimit, loadedAccountsBytes: MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES },
  };
}

/** The units a simulation's use asks, with the margin. */
function asked(unitsConsumed: number): number {
  return unitsConsumed * (1 + COMPUTE_UNIT_MARGIN);
}

/**
 * A simulation asked more than the ceiling, and `second` is the same bytes on a second endpoint
 * (undefined: the chain has none). When it too succeeds above the ceiling, the two agree and
 * the ceiling rises to the lower of their asks (a program upgrade lands without a refusal
 * first); otherwise the first is one node's word and the ceiling stays, as it does without a
 * second endpoint: then only the chain moves it (`ComputeCeilings.exceeded`). Returns the units
 * to measure the batch by: the lower of the two uses when they agree, the first's otherwise
 * (clamped by the unmoved ceiling, so a second endpoint that says less cannot starve the limit).
 */
function secondOpinion(
  first: { unitsConsumed: number },
  second: { err: TransactionError | null; unitsConsumed: number } | undefined,
  s: { count: number; ceilings: ComputeCeilings; action: CrankAction },
): number {
  if (second === undefined || second.err !== null) return first.unitsConsumed;
  const unitsConsumed = Math.min(first.unitsConsumed, second.unitsConsumed);
  if (asked(unitsConsumed) <= s.count * s.ceilings.perInstruction(s.action)) return first.unitsConsumed;
  s.ceilings.agreed(s.action, unitLimitFor(unitsConsumed, s.count, MAX_COMPUTE_UNIT_LIMIT), s.count);
  return unitsConsumed;
}

/** Bounds the one getTransaction read per landing that `learnFromLanding` makes. */
const LANDED_READ_TIMEOUT_MS = 5_000;

/**
 * What one of the crank's own transactions showed when it landed, read once (one getTransaction,
 * within LANDED_READ_TIMEOUT_MS and the response bound of ../../rpc/bounded-body.ts): the units it
 * consumed set the action's ceiling (`ComputeCeilings.used`). Without history, or when the read
 * fails or says nothing, the limit it landed under does (`landed`). Never fails the landing.
 */
export async function learnFromLanding(
  rpc: ChainRpc,
  ceilings: ComputeCeilings,
  landing: { signature: string; action: CrankAction; unitLimit: number; count: number },
  signal: AbortSignal,
): Promise<void> {
  const { signature, action, unitLimit, count } = landing;
  let unitsConsumed: number | null = null;
  try {
    unitsConsumed = await rpc.getTransactionComputeUnits(signature, AbortSignal.any([signal, AbortSignal.timeout(LANDED_READ_TIMEOUT_MS)]));
  } catch {
    // No history, a slow or failing node: the limit is what is known.
  }
  if (unitsConsumed === null) ceilings.landed(action, unitLimit, count);
  else ceilings.used(action, { unitsConsumed, unitLimit, count });
}

/** The runtime's refusal of a transaction whose accounts load more than its SetLoadedAccountsDataSizeLimit. */
export const LOADED_ACCOUNTS_EXCEEDED = 'MaxLoadedAccountsDataSizeExceeded';

function unsignedWire(instructions: readonly TransactionInstruction[], feePayer: PublicKey): Uint8Array {
  const transaction = new Transaction({ feePayer, blockhash: SIMULATION_BLOCKHASH, lastValidBlockHeight: 0 }).add(...instructions);
  return transaction.serialize({ requireAllSignatures: false, verifySignatures: false });
}
