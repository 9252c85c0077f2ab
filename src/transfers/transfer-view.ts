import type { DepositEntry, DepositResult, TrackerHeader, WithdrawEntry } from '../chain/types.js';
import { isRelayableWithdrawResult } from '../machines/planning/cycle-plan.js';

/**
 * The operator's view of transfers (`npm run ops`, GET /transfers): per transfer index, its
 * phase, both entries, rule 3.1 and the SPEC §7 recovery row, computed from the two trackers
 * only. Pure and JSON-safe (u64 values as decimal strings). docs/operating.md "Phases" defines the phases.
 */

/**
 * The step a transfer waits for (docs/operating.md "Phases"):
 * - deposit: on the source, no destination entry yet (no ack_deposit proposal landed);
 * - ack_deposit: the destination entry is Voting (threshold not reached);
 * - withdraw: the destination entry is Finalized Confirmed with created_token_account Pending
 *   (the user has not claimed; rule 3.1 does not hold yet);
 * - ack_withdraw: the destination result is relayable (rule 3.1) and the source entry is not Finalized;
 * - cleanup_deposit: the source entry is Finalized and not cleaned up;
 * - done: cleaned up.
 */
export const PHASES = ['deposit', 'ack_deposit', 'withdraw', 'ack_withdraw', 'cleanup_deposit', 'done'] as const;
export type Phase = (typeof PHASES)[number];

export type ResultView = { kind: 'None' } | { kind: 'Confirmed'; amount: string } | { kind: 'Rejected'; reason: string };

export interface Voters {
  yes: string[];
  no: string[];
}

interface DepositView {
  status: DepositEntry['status'];
  amount: string;
  depositor: string;
  recipient: string;
  source_mint: string;
  proposed: ResultView;
  result: ResultView;
  refunded_amount: string;
  cleanup_completed: boolean;
  deposit_slot: string;
  voters: Voters;
}

interface WithdrawView {
  status: WithdrawEntry['status'];
  created_token_account: WithdrawEntry['createdTokenAccount'];
  amount: string;
  result: ResultView;
  finalized_slot: string;
  voters: Voters;
}

/** One row of SPEC §7 "Recovery guidance", in plain words. */
export interface RecoveryRow {
  symptom: string;
  meaning: string;
  action: string;
}

export interface TransferView {
  index: number;
  phase: Phase;
  /** Rule 3.1: the destination result may be relayed by ack_withdraw. */
  rule_3_1_holds: boolean;
  source: DepositView;
  /** Null until an ack_deposit proposal created the destination entry. */
  destination: WithdrawView | null;
  /** The SPEC §7 row that applies; null once the transfer is done. */
  recovery: RecoveryRow | null;
}

export function phaseOf(deposit: DepositEntry, withdraw: WithdrawEntry | null): Phase {
  if (deposit.status === 'Finalized') return deposit.cleanupCompleted ? 'done' : 'cleanup_deposit';
  if (withdraw === null || withdraw.status === 'Empty') return 'deposit';
  if (withdraw.status === 'Voting') return 'ack_deposit';
  return isRelayableWithdrawResult(withdraw) ? 'ack_withdraw' : 'withdraw';
}

const RECOVERY: Readonly<Record<Exclude<Phase, 'done'>, RecoveryRow>> = {
  deposit: {
    symptom: 'Deposit exists, nothing on destination',
    meaning: 'ack_deposit has not reached threshold finalization (no proposal has landed yet)',
    action:
      'Check the deposit entry on the source tracker, that the servers run, RPC health, recent crank actions, /health and /metrics; ack_deposit moves it',
  },
  ack_deposit: {
    symptom: 'Deposit exists, nothing on destination',
    meaning: 'ack_deposit has not reached threshold finalization: the withdraw entry is still Voting',
    action:
      'Check which authorities have not voted (destination voters), that their servers run, RPC health, /health and /metrics; ack_deposit moves it',
  },
  withdraw: {
    symptom: 'Withdraw entry exists but is not executable',
    meaning: 'Confirmed with created_token_account Pending: the user has not claimed yet, so rule 3.1 does not hold',
    action: 'Inspect the entry state; nothing for the operator until the user claims (then ack_withdraw relays it)',
  },
  ack_withdraw: {
    symptom: 'Withdrawal done, source state unfinished',
    meaning: 'The result still needs ack_withdraw, then deposit finalization, then cleanup_deposit',
    action: 'Use ack_withdraw (rule 3.1 holds); check which authorities have not voted on the source',
  },
  cleanup_deposit: {
    symptom: 'Finalized deposit not cleaned up',
    meaning: 'cleanup_deposit has not run',
    action: 'Use cleanup_deposit',
  },
};

/** A Rejected destination result names its reason in the row's meaning. */
export function recoveryRow(phase: Phase, withdraw: WithdrawEntry | null): RecoveryRow | null {
  if (phase === 'done') return null;
  const row = RECOVERY[phase];
  if (phase === 'ack_withdraw' && withdraw?.result.kind === 'Rejected') {
    return { ...row, meaning: `${row.meaning} (the destination rejected it: ${withdraw.result.reason}, the deposit is refunded)` };
  }
  return row;
}

export function votersOf(header: TrackerHeader, yesMask: number, noMask: number): Voters {
  const inMask = (mask: number) => header.authorities.filter((_, slot) => (mask & (1 << slot)) !== 0);
  return { yes: inMask(yesMask), no: inMask(noMask) };
}

function resultView(result: DepositResult): ResultView {
  switch (result.kind) {
    case 'None':
      return { kind: 'None' };
    case 'Confirmed':
      return { kind: 'Confirmed', amount: result.amount.toString() };
    case 'Rejected':
      return { kind: 'Rejected', reason: result.reason };
  }
}

export interface TransferEntries {
  index: number;
  deposit: DepositEntry;
  withdraw: WithdrawEntry | null;
  sourceHeader: TrackerHeader;
  targetHeader: TrackerHeader;
}

export function transferView({ index, deposit, withdraw, sourceHeader, targetHeader }: TransferEntries): TransferView {
  const phase = phaseOf(deposit, withdraw);
  return {
    index,
    phase,
    rule_3_1_holds: withdraw !== null && isRelayableWithdrawResult(withdraw),
    source: {
      status: deposit.status,
      amount: deposit.amount.toString(),
      depositor: deposit.depositor,
      recipient: deposit.recipient,
      source_mint: deposit.sourceMint,
      proposed: resultView(deposit.proposed),
      result: resultView(deposit.result),
      refunded_amount: deposit.refundedAmount.toString(),
      cleanup_completed: deposit.cleanupCompleted,
      deposit_slot: deposit.depositSlot.toString(),
      voters: votersOf(sourceHeader, deposit.yesVotes, deposit.noVotes),
    },
    destination:
      withdraw === null
        ? null
        : {
            status: withdraw.status,
            created_token_account: withdraw.createdTokenAccount,
            amount: withdraw.amount.toString(),
            result: resultView(withdraw.result),
            finalized_slot: withdraw.finalizedSlot.toString(),
            voters: votersOf(targetHeader, withdraw.yesVotes, withdraw.noVotes),
          },
    recovery: recoveryRow(phase, withdraw),
  };
}
