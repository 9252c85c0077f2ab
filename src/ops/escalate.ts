import type { TransferView } from '../transfers/transfer-view.js';

/**
 * `ops escalate`: one JSON document with what SPEC §7 says to collect when escalating. Pure:
 * the CLI gathers the parts (each may have failed: then its `error` says why) and this names them.
 */

/** Recent signatures per chain in the document. */
export const ESCALATE_SIGNATURES = 20;

export interface SignatureSummary {
  signature: string;
  slot: number;
  err: unknown;
  block_time: number | null;
}

export type Part<T> = { value: T; error: null } | { value: null; error: string };

export interface EscalationInputs {
  generatedAt: Date;
  authority: string;
  sourceChainId: number;
  targetChainId: number;
  transfer: TransferView;
  health: Part<unknown> & { origin: string | null };
  signatures: Part<{ source: SignatureSummary[]; destination: SignatureSummary[] }>;
}

export function escalationDocument(inputs: EscalationInputs) {
  const { transfer } = inputs;
  return {
    generated_at: inputs.generatedAt.toISOString(),
    source_chain_id: inputs.sourceChainId,
    target_chain_id: inputs.targetChainId,
    authority: inputs.authority,
    source_deposit_entry_id: transfer.index,
    // Entry i of the WithdrawTracker carries deposit i (PROTOCOL.md): known once it exists.
    destination_withdraw_entry_id: transfer.destination === null ? null : transfer.index,
    deposit_status: transfer.source.status,
    withdraw_status: transfer.destination?.status ?? null,
    phase: transfer.phase,
    rule_3_1_holds: transfer.rule_3_1_holds,
    cleanup_ran: transfer.source.cleanup_completed,
    recovery: transfer.recovery,
    transfer,
    health: inputs.health,
    recent_signatures: {
      note: `the newest ${ESCALATE_SIGNATURES} transactions naming this authority's key on each chain (not filtered by entry)`,
      ...inputs.signatures,
    },
    server_logs: 'attach the server log lines around the times above (crank: lines carry action, indices and signatures)',
  };
}
