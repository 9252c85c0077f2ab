import type { ChainPair } from '../../src/devnet/chain-pair.js';
import type { FaultSettings } from '../../src/devnet/faults/settings.js';

/**
 * RPC faults switching on and off on both chains: each phase holds one kind of fault for
 * `phaseMs`, then a quiet phase follows, round after round. Counts what it switched on.
 */

export interface FaultPhase {
  kind: string;
  settings: FaultSettings;
}

export const SOAK_FAULT_PHASES: readonly FaultPhase[] = [
  { kind: 'http500 (10 % of calls)', settings: { methods: { '*': { errorRate: 0.1, errorKind: 'http500' } } } },
  { kind: 'http429 storm on reads', settings: { methods: { getAccountInfo: { http429: 20, retryAfterSecs: 0 } } } },
  { kind: 'node behind (-32005, 5 %)', settings: { methods: { '*': { errorRate: 0.05, errorKind: 'rpc' } } } },
  { kind: 'lost send responses (5)', settings: { loseResponses: 5 } },
  { kind: 'dropped transactions (5)', settings: { dropTransactions: 5 } },
  { kind: 'slow node (300 ms per call)', settings: { methods: { '*': { latencyMs: 300 } } } },
];

export interface FaultSchedule {
  /** Phases switched on, by kind (each phase hits both chains). */
  injected(): Record<string, number>;
  stop(): void;
}

export function startFaultSchedule(pair: ChainPair, phaseMs: number): FaultSchedule {
  const injected: Record<string, number> = {};
  let step = 0;
  const apply = () => {
    // Even steps inject the next kind, odd steps are quiet.
    const phase = step % 2 === 0 ? SOAK_FAULT_PHASES[(step / 2) % SOAK_FAULT_PHASES.length] : undefined;
    step += 1;
    for (const node of [pair.source, pair.target]) {
      node.faults.clear();
      if (phase !== undefined) node.faults.set({ seed: step, ...phase.settings });
    }
    if (phase !== undefined) injected[phase.kind] = (injected[phase.kind] ?? 0) + 1;
  };
  apply();
  const timer = setInterval(apply, phaseMs);
  return {
    injected: () => ({ ...injected }),
    stop: () => {
      clearInterval(timer);
      pair.source.faults.clear();
      pair.target.faults.clear();
    },
  };
}

/** Error log lines a fault explains, by the words its failures carry. */
const EXPLAINED_BY: readonly [string, RegExp][] = [
  ['http500', /HTTP 500/],
  ['http429', /HTTP 429/],
  ['node behind', /-32005|unhealthy|behind/i],
  ['lost or dropped send', /not landed|never landed|outcome unknown|not confirmed within/],
  ['slow node', /no response within|attempt cut after/],
];

/** The fault kind an error line's text points to, or undefined when nothing injected explains it. */
export function explainingFault(text: string): string | undefined {
  return EXPLAINED_BY.find(([, pattern]) => pattern.test(text))?.[0];
}
