import type { Faults } from '../../devnet/faults/faults.js';
import type { FaultSettings } from '../../devnet/faults/settings.js';

/**
 * RPC faults switching on and off on both chains: each phase holds one kind of fault for
 * `phaseMs`, then a quiet phase follows, round after round. Counts what it switched on.
 * Each server has a primary and a fallback endpoint per chain: request faults hit both (a
 * failover does not escape them), a stalled or lagging slot only the primary (what the
 * fallback is for).
 */

interface FaultPhase {
  kind: string;
  settings: FaultSettings;
  /** Only the primary endpoints, not the fallbacks. */
  primaryOnly?: boolean;
}

/** The faults of every endpoint the servers use, on both chains. */
export interface SoakEndpoints {
  primaries: readonly Faults[];
  fallbacks: readonly Faults[];
}

const SOAK_FAULT_PHASES: readonly FaultPhase[] = [
  { kind: 'http500 (10 % of calls)', settings: { methods: { '*': { errorRate: 0.1, errorKind: 'http500' } } } },
  {
    kind: 'http429 storm on reads',
    settings: { methods: { getAccountInfo: { http429: 20, retryAfterSecs: 0 }, getMultipleAccounts: { http429: 20, retryAfterSecs: 0 } } },
  },
  { kind: 'node behind (-32005, 5 %)', settings: { methods: { '*': { errorRate: 0.05, errorKind: 'rpc' } } } },
  { kind: 'lost send responses (5 per endpoint)', settings: { loseResponses: 5 } },
  { kind: 'dropped transactions (5 per endpoint)', settings: { dropTransactions: 5 } },
  { kind: 'slow node (300 ms per call)', settings: { methods: { '*': { latencyMs: 300 } } } },
  { kind: 'stalled primary endpoint (slot frozen)', settings: { freezeSlot: true }, primaryOnly: true },
  { kind: 'lagging primary endpoint (300 slots behind)', settings: { slotLag: 300 }, primaryOnly: true },
];

export interface FaultSchedule {
  /** Phases switched on, by kind (each phase hits both chains). */
  injected(): Record<string, number>;
  stop(): void;
}

export function startFaultSchedule(endpoints: SoakEndpoints, phaseMs: number): FaultSchedule {
  const every = [...endpoints.primaries, ...endpoints.fallbacks];
  const injected: Record<string, number> = {};
  let step = 0;
  const apply = () => {
    // Even steps inject the next kind, odd steps are quiet.
    const phase = step % 2 === 0 ? SOAK_FAULT_PHASES[(step / 2) % SOAK_FAULT_PHASES.length] : undefined;
    step += 1;
    for (const faults of every) faults.clear();
    if (phase === undefined) return;
    for (const faults of phase.primaryOnly === true ? endpoints.primaries : every) faults.set({ seed: step, ...phase.settings });
    injected[phase.kind] = (injected[phase.kind] ?? 0) + 1;
  };
  apply();
  const timer = setInterval(apply, phaseMs);
  return {
    injected: () => ({ ...injected }),
    stop: () => {
      clearInterval(timer);
      for (const faults of every) faults.clear();
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
  // Every endpoint of a chain out at once: each failed its last few calls to one of the request faults above.
  ['every endpoint taken out by request faults', /is taken out after \d+ consecutive failures/],
];

/** The fault kind an error line's text points to, or undefined when nothing injected explains it. */
export function explainingFault(text: string): string | undefined {
  return EXPLAINED_BY.find(([, pattern]) => pattern.test(text))?.[0];
}
