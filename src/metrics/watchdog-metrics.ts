import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * The watchdog's metrics (docs/operating.md "The watchdog"): breaches of what the bridge
 * finalizes, the doubts that did not survive the finalized re-check, whether this authority's
 * votes are held, and the bridge program's deployment as the loader keeps it.
 */
export function watchdogMetrics(registers: Registry[]) {
  return {
    invariantBreaches: new Counter({
      name: 'bridge_invariant_breaches_total',
      help: 'Breaches of the bridge invariants, each counted once when every endpoint in service shows it at finalized, by invariant.',
      labelNames: ['invariant'] as const,
      registers,
    }),
    invariantDoubts: new Counter({
      name: 'bridge_invariant_doubts_total',
      help: 'Breach candidates of one view that the finalized re-check on every endpoint did not show (a lying or lagging node, or a read that did not reach finalized in time), by invariant.',
      labelNames: ['invariant'] as const,
      registers,
    }),
    watchdogHalted: new Gauge({
      name: 'bridge_watchdog_halted',
      help: '1 while BRIDGE_ON_INVARIANT_BREACH=halt holds every vote of this authority for an unacknowledged breach (npm run ops -- acknowledge <breach>).',
      registers,
    }),
    programDeploySlot: new Gauge({
      name: 'bridge_program_deploy_slot',
      help: "The slot of the bridge program's last deployment or upgrade (its programdata account), as every endpoint in service agrees, by chain.",
      labelNames: ['chain'] as const,
      registers,
    }),
    programChanges: new Counter({
      name: 'bridge_program_changes_total',
      help: "Changes of the bridge program's deployment seen after the first read (programdata, deployment slot, upgrade authority or bytes), by chain.",
      labelNames: ['chain'] as const,
      registers,
    }),
    flowHeld: new Gauge({
      name: 'bridge_flow_held',
      help: "1 while the flow breaker holds this authority's ack_deposit votes at a transfer of this source mint that BRIDGE_FLOW_LIMIT_<MINT> does not allow, by mint.",
      labelNames: ['mint'] as const,
      registers,
    }),
    programHashMismatch: new Gauge({
      name: 'bridge_program_hash_mismatch',
      help: "1 while the bridge program's bytes do not hash to BRIDGE_<CHAIN>_PROGRAM_HASH: signing on that chain is held, by chain.",
      labelNames: ['chain'] as const,
      registers,
    }),
  };
}
