import type fc from 'fast-check';
import bs58 from 'bs58';
import { describeError } from '../../src/errors.js';
import type { CrankReport } from '../../src/machines/crank-types.js';
import type { ByzantineAction } from '../system/byzantine.js';
import type { BridgeSystem } from '../system/bridge-system.js';
import type { FaultSpec } from '../system/faults.js';
import type { ChainSide } from '../system/ledger.js';
import type { PairKind, TokenPairSettings } from '../system/participants.js';
import { drainToCompletion } from '../invariants/liveness.js';
import { observe, type BridgeModel, type PropertyRun } from './model.js';

/**
 * One class per command: `check` (may it run now, from the model), `run` (act on the real
 * system, record what happened, check every invariant, update the model), `toString` (how it
 * reads in a counterexample).
 */

abstract class BridgeCommand implements fc.AsyncCommand<BridgeModel, PropertyRun> {
  abstract check(model: Readonly<BridgeModel>): boolean;
  abstract toString(): string;
  protected abstract act(system: BridgeSystem, model: BridgeModel, real: PropertyRun): Promise<string>;

  async run(model: BridgeModel, real: PropertyRun): Promise<void> {
    const outcome = await this.act(real.system, model, real);
    real.system.note(this.toString(), outcome);
    real.checker.check(this.toString());
    observe(model, real.system);
  }
}

/**
 * Faults stop, users claim, and the honest cranks run until every deposit is Finalized and
 * cleaned up (invariant 7), from wherever the sequence is; then the sequence goes on. It is
 * also what a shrunk counterexample ends with when a failure only shows once work drains: the
 * commands shrinker always keeps a sequence's last command, and shrinks it into this one.
 */
export class QuiesceCommand extends BridgeCommand {
  check(): boolean {
    return true;
  }

  protected async act(_system: BridgeSystem, _model: BridgeModel, real: PropertyRun): Promise<string> {
    const rounds = await drainToCompletion(real);
    return `settled in ${rounds} round(s)`;
  }

  toString(): string {
    return 'quiesce()';
  }
}

export class DepositCommand extends BridgeCommand {
  constructor(
    readonly kind: PairKind,
    readonly amount: bigint,
    readonly recipient: Uint8Array,
    readonly depositor: number,
  ) {
    super();
  }

  check(): boolean {
    return true;
  }

  protected act(system: BridgeSystem): Promise<string> {
    return system.participants.deposit(this.kind, this.amount, bs58.encode(this.recipient), this.depositor);
  }

  toString(): string {
    return `deposit(${this.kind}, ${this.amount})`;
  }
}

export class CrankCycleCommand extends BridgeCommand {
  constructor(readonly crank: number) {
    super();
  }

  check(): boolean {
    return true;
  }

  protected act(system: BridgeSystem): Promise<string> {
    return runCycle(system, this.crank);
  }

  toString(): string {
    return `crankCycle(${this.crank})`;
  }
}

/**
 * Honest authority k's server restarts between cycles (BRIDGE_HANDOFF_SECS=0, one server per
 * key): a new crank over the same key and chains, with nothing of the old process's memory.
 * What the old one sent may still be in flight (delayed, waiting below a price floor, answer
 * lost); the new one must learn it from the nonce accounts before it signs anything.
 */
export class RestartCommand extends BridgeCommand {
  constructor(readonly crank: number) {
    super();
  }

  check(): boolean {
    return true;
  }

  protected act(system: BridgeSystem): Promise<string> {
    return system.restart(this.crank);
  }

  toString(): string {
    return `restart(${this.crank})`;
  }
}

/**
 * Honest authority k's server restarts with its transactions in flight: `hold` (an in-flight
 * delay, a floor above the cap, lost answers) goes on on `chain`, one cycle of k's crank sends
 * into it, the server restarts (the new crank's first cycle runs with the fault still on), then
 * the chain's faults go off: what is still held lands with the traffic that follows. Kept on,
 * the hold would make every later cycle wait out its confirmations, for no new interleaving.
 */
export class RestartInFlightCommand extends BridgeCommand {
  constructor(
    readonly crank: number,
    readonly chain: ChainSide,
    readonly hold: FaultSpec,
  ) {
    super();
  }

  check(): boolean {
    return true;
  }

  protected act(system: BridgeSystem): Promise<string> {
    return whileFaulty(system, this.chain, this.hold, async () => `${await runCycle(system, this.crank)}; ${await system.restart(this.crank)}`);
  }

  toString(): string {
    return `restartInFlight(${this.crank}, ${this.chain}, ${JSON.stringify(this.hold)})`;
  }
}

/**
 * A fee surge the history does not show (a price floor, getRecentPrioritizationFees reporting
 * per-slot minimums, mostly 0) begins on `chain`, and honest authority k's crank runs a cycle
 * while slots pass: what it sends waits below the floor until it is re-priced, at most to the
 * cap. Then the surge passes (the chain's faults go off): what still waits lands.
 */
export class HiddenSurgeCommand extends BridgeCommand {
  constructor(
    readonly chain: ChainSide,
    readonly priceFloor: number,
    readonly crank: number,
  ) {
    super();
  }

  check(): boolean {
    return true;
  }

  protected act(system: BridgeSystem): Promise<string> {
    const surge: FaultSpec = { kind: 'hiddenSurge', priceFloor: this.priceFloor };
    return whileFaulty(system, this.chain, surge, async () => {
      const cycle = await system.withSlotsPassing(this.chain, () => runCycle(system, this.crank));
      return `${cycle}; ${this.chain} at slot ${system.pair[this.chain].slot}`;
    });
  }

  toString(): string {
    return `hiddenSurge(${this.chain}, floor ${this.priceFloor}, crankCycle(${this.crank}))`;
  }
}

export class ClaimCommand extends BridgeCommand {
  constructor(readonly pick: number) {
    super();
  }

  check(model: Readonly<BridgeModel>): boolean {
    return model.claimable.length > 0;
  }

  protected act(system: BridgeSystem, model: BridgeModel): Promise<string> {
    model.claims += 1;
    return system.participants.claim(model.claimable[this.pick % model.claimable.length]!);
  }

  toString(): string {
    return `claim(#${this.pick})`;
  }
}

export class ByzantineCommand extends BridgeCommand {
  constructor(
    readonly authority: number,
    readonly action: ByzantineAction,
  ) {
    super();
  }

  check(model: Readonly<BridgeModel>): boolean {
    return model.byzantineAuthorities > 0;
  }

  protected act(system: BridgeSystem, model: BridgeModel): Promise<string> {
    model.byzantineActions += 1;
    return system.byzantine[this.authority % system.byzantine.length]!.act(this.action);
  }

  toString(): string {
    const votes = this.action.lies.map((lie) => (lie ? 'lie' : 'honest')).join(',');
    return `byzantine(${this.authority}, ${this.action.chain}, [${votes}], flavor ${this.action.flavor})`;
  }
}

export class SetTokenPairCommand extends BridgeCommand {
  constructor(
    readonly kind: PairKind,
    readonly settings: TokenPairSettings,
  ) {
    super();
  }

  check(): boolean {
    return true;
  }

  protected act(system: BridgeSystem): Promise<string> {
    return system.participants.setTokenPair(this.kind, this.settings);
  }

  toString(): string {
    const { frozen, limitRemaining, vaultBalance } = this.settings;
    return `setTokenPair(${this.kind}, frozen ${frozen}, limit ${limitRemaining}, vault ${vaultBalance})`;
  }
}

export class ResetPendingCommand extends BridgeCommand {
  check(): boolean {
    return true;
  }

  protected act(system: BridgeSystem): Promise<string> {
    return system.participants.resetPending();
  }

  toString(): string {
    return 'resetPending()';
  }
}

export class FaultOnCommand extends BridgeCommand {
  constructor(
    readonly chain: ChainSide,
    readonly spec: FaultSpec,
  ) {
    super();
  }

  check(): boolean {
    return true;
  }

  protected async act(system: BridgeSystem): Promise<string> {
    return system.faultOn(this.chain, this.spec);
  }

  toString(): string {
    return `faultOn(${this.chain}, ${JSON.stringify(this.spec)})`;
  }
}

export class FaultsOffCommand extends BridgeCommand {
  constructor(readonly chain: ChainSide) {
    super();
  }

  check(model: Readonly<BridgeModel>): boolean {
    return model.faults[this.chain];
  }

  protected async act(system: BridgeSystem): Promise<string> {
    system.faultsOff(this.chain);
    return 'cleared';
  }

  toString(): string {
    return `faultsOff(${this.chain})`;
  }
}

export class TimePassesCommand extends BridgeCommand {
  constructor(
    readonly chain: ChainSide,
    readonly slots: number,
  ) {
    super();
  }

  check(): boolean {
    return true;
  }

  protected async act(system: BridgeSystem): Promise<string> {
    system.ledger.advanceSlots(this.chain, this.slots);
    return `${this.chain} at slot ${system.pair[this.chain].slot}`;
  }

  toString(): string {
    return `timePasses(${this.chain}, ${this.slots} slots)`;
  }
}

/** `fault` on `chain` while `work` runs, then the chain's faults off (what they held lands with the traffic that follows). */
async function whileFaulty(system: BridgeSystem, chain: ChainSide, fault: FaultSpec, work: () => Promise<string>): Promise<string> {
  const on = system.faultOn(chain, fault);
  try {
    return `${on}; ${await work()}; ${chain} faults off`;
  } finally {
    system.faultsOff(chain);
  }
}

/** One cycle of honest crank k (modulo their number), described. */
async function runCycle(system: BridgeSystem, k: number): Promise<string> {
  const crank = system.honest[k % system.honest.length]!;
  try {
    const report = await crank.cycle();
    const error = crank.health().last_error;
    if (error !== null) system.failedCycles += 1;
    return `${describeReport(report)}${error === null ? '' : `; last_error: ${error}`}`;
  } catch (err) {
    return `failed: ${describeError(err)}`;
  }
}

function describeReport(report: CrankReport): string {
  const flag = (value: boolean) => (value ? 'yes' : 'no');
  return `ack_deposit ${flag(report.ack_deposit_attempted)}, ack_withdraw ${flag(report.ack_withdraw_attempted)}, cleanup ${report.cleanup_completed}/${report.cleanup_attempted}`;
}
