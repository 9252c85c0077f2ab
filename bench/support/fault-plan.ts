import { mulberry32 } from '../../devnet/faults/faults.js';
import type { ChainSide } from '../../src/domain.js';
import type { BenchWorld } from './bench-world.js';

/**
 * Faults injected on the devnet for the length of a run, on both chains:
 * - HTTP 500s: the devnet's seeded error rate on every JSON-RPC method (users' calls included).
 * - Lost responses and dropped transactions: the devnet counts these ("the next N
 *   sendTransaction calls"), so a time-based schedule would hit whoever sends next, and on a
 *   quiet chain that is every rebroadcast of one transaction. Instead, just before each
 *   sendTransaction a crank makes (first sends and rebroadcasts alike), one fault is armed on
 *   that chain with the given probability, from a seeded PRNG: "p of the cranks' sends". A
 *   user's send that slips in between may take it; the counts report what was consumed.
 */

export interface FaultPlan {
  /** Fraction (0..1) of every JSON-RPC call on both chains answered with HTTP 500. */
  http500Rate?: number;
  /** Fraction of the cranks' sends whose transaction lands but whose answer is an HTTP 500. */
  lostResponseRate?: number;
  /** Fraction of the cranks' sends answered with the signature and never landed. */
  dropRate?: number;
  /** Each chain's primary endpoint is a closed port; the devnet node is the fallback. */
  deadPrimary?: boolean;
}

export interface InjectedFaults {
  lostResponses: number;
  droppedTransactions: number;
}

export interface ArmedFaults {
  /** Called by the cranks' fetch before each sendTransaction on `chain`. */
  beforeSend(chain: ChainSide): void;
  /** Clears every fault and returns how many lost responses and drops were consumed. */
  disarm(): InjectedFaults;
}

const FAULT_SEED = 7;

export function armFaults(bench: BenchWorld, plan: FaultPlan): ArmedFaults {
  const nodes = { source: bench.pair.source, target: bench.pair.target };
  const random = mulberry32(FAULT_SEED);
  const armed: InjectedFaults = { lostResponses: 0, droppedTransactions: 0 };
  if (plan.http500Rate !== undefined) {
    for (const node of Object.values(nodes))
      node.faults.set({ seed: FAULT_SEED, methods: { '*': { errorRate: plan.http500Rate, errorKind: 'http500' } } });
  }
  const arm = (chain: ChainSide, kind: 'loseResponses' | 'dropTransactions', rate: number | undefined): boolean => {
    if (rate === undefined || random() >= rate) return false;
    const faults = nodes[chain].faults;
    if (faults.snapshot()[kind] > 0) return false;
    faults.set({ [kind]: 1 });
    return true;
  };
  return {
    beforeSend: (chain) => {
      if (arm(chain, 'dropTransactions', plan.dropRate)) armed.droppedTransactions += 1;
      else if (arm(chain, 'loseResponses', plan.lostResponseRate)) armed.lostResponses += 1;
    },
    disarm: () => {
      const consumed = { ...armed };
      for (const node of Object.values(nodes)) {
        const snapshot = node.faults.snapshot();
        consumed.lostResponses -= snapshot.loseResponses;
        consumed.droppedTransactions -= snapshot.dropTransactions;
        node.faults.clear();
      }
      return consumed;
    },
  };
}

export function describeFaults(plan: FaultPlan | undefined): string {
  const percent = (rate: number) => `${Math.round(rate * 100)}%`;
  const parts = [
    plan?.http500Rate === undefined ? undefined : `${percent(plan.http500Rate)} of RPC calls HTTP 500`,
    plan?.lostResponseRate === undefined ? undefined : `${percent(plan.lostResponseRate)} of sends lose the response`,
    plan?.dropRate === undefined ? undefined : `${percent(plan.dropRate)} of sends dropped`,
    plan?.deadPrimary === true ? 'primary endpoint of two dead (closed port)' : undefined,
  ];
  return parts.filter((part) => part !== undefined).join(' + ') || 'none';
}
