import type { InvariantChecker } from '../invariants/checker.js';
import type { BridgeSystem } from '../system/bridge-system.js';
import type { ChainSide } from '../system/ledger.js';

/**
 * The model is deliberately simple: what has been done to the bridge, not how the bridge
 * should answer. The invariants judge the answers; the model only decides which commands make
 * sense next (a claim needs a claimable withdrawal, faults off needs faults on).
 */
export interface BridgeModel {
  deposits: number;
  /** Destination entries Confirmed with the token account still Pending: a user may claim them. */
  claimable: number[];
  claims: number;
  faults: Record<ChainSide, boolean>;
  byzantineActions: number;
  byzantineAuthorities: number;
}

/** What a command sequence runs against. */
export interface PropertyRun {
  system: BridgeSystem;
  checker: InvariantChecker;
}

export function initialModel(system: BridgeSystem): BridgeModel {
  return {
    deposits: 0,
    claimable: [],
    claims: 0,
    faults: { source: false, target: false },
    byzantineActions: 0,
    byzantineAuthorities: system.byzantine.length,
  };
}

/** Brings what the model knows of the chains up to date after a command. */
export function observe(model: BridgeModel, system: BridgeSystem): void {
  const state = system.ledger.state();
  model.deposits = state.source.entries.length;
  model.claimable = claimableEntries(system);
  model.faults = { ...system.faultsActive };
}

export function claimableEntries(system: BridgeSystem): number[] {
  return system.ledger
    .state()
    .target.entries.flatMap((entry, index) =>
      entry.status === 'Finalized' && entry.result.kind === 'Confirmed' && entry.createdTokenAccount === 'Pending' ? [index] : [],
    );
}
