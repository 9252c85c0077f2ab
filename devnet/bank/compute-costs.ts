import { instructionNameOf } from '../../src/chain/codec/instructions.js';
import { DevnetError } from '../devnet-error.js';

/**
 * What each instruction costs in compute units (PROTOCOL.md "Compute units and fees"). The
 * bridge program's costs are this version's, times a scale an operator sets at start or while
 * the chain runs, as a program upgrade would change them; builtins cost 150 whatever the scale.
 */

export const BUILTIN_INSTRUCTION_UNITS = 150;
const BRIDGE_INSTRUCTION_UNITS = { ack_deposit: 24_000, ack_withdraw: 19_000, cleanup_deposit: 16_000 } as const;
const OTHER_BRIDGE_INSTRUCTION_UNITS = 10_000;
/** At 100, ack_deposit would cost 2,400,000: more than any transaction may use. */
export const MAX_COMPUTE_COST_SCALE = 100;

type MeteredInstruction = keyof typeof BRIDGE_INSTRUCTION_UNITS;
const METERED = Object.keys(BRIDGE_INSTRUCTION_UNITS) as MeteredInstruction[];

export interface ComputeCostTable {
  scale: number;
  /** Units per instruction at this scale; `other` is any other bridge instruction. */
  units: Record<MeteredInstruction | 'other', number>;
}

export class ComputeCosts {
  #scale = 1;

  constructor(scale = 1) {
    this.setScale(scale);
  }

  setScale(scale: number): ComputeCostTable {
    checkComputeCostScale(scale);
    this.#scale = scale;
    return this.table();
  }

  table(): ComputeCostTable {
    const units = Object.fromEntries(METERED.map((name) => [name, this.#scaled(BRIDGE_INSTRUCTION_UNITS[name])]));
    return { scale: this.#scale, units: { ...units, other: this.#scaled(OTHER_BRIDGE_INSTRUCTION_UNITS) } as ComputeCostTable['units'] };
  }

  /** Units one bridge instruction consumes, whether it succeeds or fails. */
  bridgeInstruction(data: Uint8Array): number {
    const name = instructionNameOf(data);
    return this.#scaled(name !== undefined && isMetered(name) ? BRIDGE_INSTRUCTION_UNITS[name] : OTHER_BRIDGE_INSTRUCTION_UNITS);
  }

  // To the nearest unit: 24,000 × 1.1 is 26,400.000000000004 in floating point.
  #scaled(units: number): number {
    return Math.round(units * this.#scale);
  }
}

/** A scale the devnet runs at: above 0, at most MAX_COMPUTE_COST_SCALE. */
export function isComputeCostScale(scale: number): boolean {
  return Number.isFinite(scale) && scale > 0 && scale <= MAX_COMPUTE_COST_SCALE;
}

function checkComputeCostScale(scale: number): void {
  if (!isComputeCostScale(scale)) {
    const reason = `must be a number in (0, ${MAX_COMPUTE_COST_SCALE}], got ${String(scale)}`;
    throw new DevnetError('DEVNET__INVALID_OPTION', { option: 'computeCostScale', reason }, `devnet option computeCostScale ${reason}`);
  }
}

function isMetered(name: string): name is MeteredInstruction {
  return name in BRIDGE_INSTRUCTION_UNITS;
}
