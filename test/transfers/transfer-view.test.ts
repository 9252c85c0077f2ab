import { describe, expect, it } from 'vitest';
import type { DepositEntry, WithdrawEntry } from '../../src/chain/types.js';
import { countPhases, transferPage } from '../../src/transfers/transfer-queries.js';
import { phaseOf, recoveryRow, transferView, votersOf, type Phase } from '../../src/transfers/transfer-view.js';
import {
  AUTHORITY,
  CONFIRMED_FULL,
  deposit,
  finalizedWithdrawal,
  OTHER_AUTHORITIES,
  trackerHeader,
  withdrawal,
} from '../machines/support/bridge-view.js';

const source = deposit(0);
const REJECTED = { kind: 'Rejected', reason: 'TokenPairFrozen' } as const;
const finalizedDeposit = (cleanupCompleted: boolean) => deposit(0, { status: 'Finalized', result: REJECTED, cleanupCompleted });

/** [case, deposit, withdraw entry, phase, rule 3.1 holds, SPEC §7 symptom] */
const CASES: Array<[string, DepositEntry, WithdrawEntry | null, Phase, boolean, string | null]> = [
  ['no destination entry', source, null, 'deposit', false, 'Deposit exists, nothing on destination'],
  ['destination entry removed (Empty)', source, withdrawal(source, { status: 'Empty' }), 'deposit', false, 'Deposit exists, nothing on destination'],
  ['destination Voting', source, withdrawal(source), 'ack_deposit', false, 'Deposit exists, nothing on destination'],
  [
    'Confirmed, token account Pending',
    source,
    finalizedWithdrawal(source, CONFIRMED_FULL(source), { createdTokenAccount: 'Pending' }),
    'withdraw',
    false,
    'Withdraw entry exists but is not executable',
  ],
  [
    'Confirmed and claimed',
    source,
    finalizedWithdrawal(source, CONFIRMED_FULL(source)),
    'ack_withdraw',
    true,
    'Withdrawal done, source state unfinished',
  ],
  ['Rejected', source, finalizedWithdrawal(source, REJECTED), 'ack_withdraw', true, 'Withdrawal done, source state unfinished'],
  [
    'source Relaying',
    deposit(0, { status: 'Relaying', proposed: REJECTED }),
    finalizedWithdrawal(source, REJECTED),
    'ack_withdraw',
    true,
    'Withdrawal done, source state unfinished',
  ],
  [
    'source Finalized, not cleaned up',
    finalizedDeposit(false),
    finalizedWithdrawal(source, REJECTED),
    'cleanup_deposit',
    true,
    'Finalized deposit not cleaned up',
  ],
  ['cleaned up', finalizedDeposit(true), finalizedWithdrawal(source, REJECTED), 'done', true, null],
];

describe('transfer phases, rule 3.1 and the SPEC §7 row', () => {
  it.each(CASES)('%s', (_name, depositEntry, withdrawEntry, phase, rule31, symptom) => {
    expect(phaseOf(depositEntry, withdrawEntry)).toBe(phase);
    const view = transferView({
      index: 0,
      deposit: depositEntry,
      withdraw: withdrawEntry,
      sourceHeader: trackerHeader('DepositTracker', { entryCount: 1, ownNext: 0 }),
      targetHeader: trackerHeader('WithdrawTracker', { entryCount: withdrawEntry === null ? 0 : 1, ownNext: 0 }),
    });
    expect(view.phase).toBe(phase);
    expect(view.rule_3_1_holds).toBe(rule31);
    expect(view.recovery?.symptom ?? null).toBe(symptom);
  });

  it('names the rejection reason in the ack_withdraw row', () => {
    expect(recoveryRow('ack_withdraw', finalizedWithdrawal(source, REJECTED))?.meaning).toContain('TokenPairFrozen');
    expect(recoveryRow('ack_withdraw', finalizedWithdrawal(source, CONFIRMED_FULL(source)))?.meaning).not.toContain('rejected');
  });

  it('turns yes/no masks into authority keys by slot', () => {
    const header = trackerHeader('DepositTracker', { entryCount: 1, ownNext: 0, authorities: [AUTHORITY, ...OTHER_AUTHORITIES] });
    expect(votersOf(header, 0b101, 0b010)).toEqual({ yes: [AUTHORITY, OTHER_AUTHORITIES[1]], no: [OTHER_AUTHORITIES[0]] });
    expect(votersOf(header, 0, 0)).toEqual({ yes: [], no: [] });
  });

  it('pages: u64 values as strings, next page index, counts per phase', async () => {
    const deposits = [finalizedDeposit(true), deposit(1), deposit(2)];
    const page = await transferPage(
      {
        sourceHeader: trackerHeader('DepositTracker', { entryCount: 5, settledPrefix: 1, ownNext: 1 }),
        targetHeader: trackerHeader('WithdrawTracker', { entryCount: 2, ownNext: 2 }),
        start: 0,
        deposits,
        withdrawals: [finalizedWithdrawal(deposits[0]!, REJECTED), withdrawal(deposits[1]!), null],
        slots: { source: 700, target: 900 },
      },
      0,
      3,
      new AbortController().signal,
    );
    expect(page.next).toBe(3);
    expect(page.slots).toEqual({ source: 700, destination: 900 });
    expect(page.transfers[1]?.source.deposit_slot).toBe('1');
    expect(page.source).toMatchObject({ entry_count: '5', settled_prefix: '1' });
    expect(page.source.authorities[0]).toEqual({ authority: AUTHORITY, next_index: '1', last_vote: 'None' });
    expect(page.transfers.map((transfer) => transfer.index)).toEqual([0, 1, 2]);
    expect(page.transfers[1]!.source.amount).toBe('1001');
    expect(countPhases(page.transfers)).toEqual({ deposit: 1, ack_deposit: 1, withdraw: 0, ack_withdraw: 0, cleanup_deposit: 0, done: 1 });
  });
});
