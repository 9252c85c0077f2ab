import type { DepositEntry, WithdrawEntry } from '../types.js';
import { accountReader, checkLength, decodeFlag, decodeTag, malformedAccount } from './account-errors.js';
import { ByteWriter } from './bytes.js';
import { readDepositResult, writeDepositResult } from './deposit-result.js';
import { CREATED_TOKEN_ACCOUNT, DEPOSIT_ENTRY_SIZE, DEPOSIT_STATUSES, WITHDRAW_ENTRY_SIZE, WITHDRAW_STATUSES, tagOf } from './layout.js';

/**
 * DepositEntry (160 bytes) and WithdrawEntry (144 bytes) records, one at a time or as a run of
 * consecutive records read with dataSlice. Reserved bytes are ignored on decode and written as
 * zeros. Errors name the account and the entry index, e.g. field `entries[7].status`.
 */

/** `data` is exactly one 160-byte record; `index` is its entry index (for error messages). */
export function decodeDepositEntry(data: Uint8Array, account: string, index: number): DepositEntry {
  const field = (name: string): string => `entries[${index}].${name}`;
  checkLength(data, DEPOSIT_ENTRY_SIZE, { account, field: `entries[${index}]`, exact: true });
  const reader = accountReader(data, account, `entries[${index}]`);
  const amount = reader.u64();
  const depositor = reader.base58();
  const recipient = reader.base58();
  const sourceMint = reader.base58();
  const status = decodeTag(DEPOSIT_STATUSES, reader.u8(), account, field('status'));
  const cleanupCompleted = decodeFlag(reader.u8(), account, field('cleanup_completed'));
  const yesVotes = reader.u16();
  const noVotes = reader.u16();
  reader.skip(2);
  const proposed = readDepositResult(reader, { account, field: field('proposed') });
  const result = readDepositResult(reader, { account, field: field('result') });
  const refundedAmount = reader.u64();
  const depositSlot = reader.u64();
  return {
    amount,
    depositor,
    recipient,
    sourceMint,
    status,
    cleanupCompleted,
    yesVotes,
    noVotes,
    proposed,
    result,
    refundedAmount,
    depositSlot,
  };
}

export function encodeDepositEntry(entry: DepositEntry): Uint8Array {
  const writer = new ByteWriter(DEPOSIT_ENTRY_SIZE)
    .u64(entry.amount, 'amount')
    .base58(entry.depositor, 'depositor')
    .base58(entry.recipient, 'recipient')
    .base58(entry.sourceMint, 'sourceMint')
    .u8(tagOf(DEPOSIT_STATUSES, entry.status, 'status'), 'status')
    .bool(entry.cleanupCompleted, 'cleanupCompleted')
    .u16(entry.yesVotes, 'yesVotes')
    .u16(entry.noVotes, 'noVotes')
    .zeros(2);
  writeDepositResult(writer, entry.proposed, 'proposed');
  writeDepositResult(writer, entry.result, 'result');
  return writer.u64(entry.refundedAmount, 'refundedAmount').u64(entry.depositSlot, 'depositSlot').toBytes();
}

/** `data` is exactly one 144-byte record; `index` is its entry index (for error messages). */
export function decodeWithdrawEntry(data: Uint8Array, account: string, index: number): WithdrawEntry {
  const field = (name: string): string => `entries[${index}].${name}`;
  checkLength(data, WITHDRAW_ENTRY_SIZE, { account, field: `entries[${index}]`, exact: true });
  const reader = accountReader(data, account, `entries[${index}]`);
  const status = decodeTag(WITHDRAW_STATUSES, reader.u8(), account, field('status'));
  const createdTokenAccount = decodeTag(CREATED_TOKEN_ACCOUNT, reader.u8(), account, field('created_token_account'));
  const yesVotes = reader.u16();
  const noVotes = reader.u16();
  reader.skip(2);
  const amount = reader.u64();
  const recipient = reader.base58();
  const sourceMint = reader.base58();
  const result = readDepositResult(reader, { account, field: field('result') });
  const tokenAccount = reader.base58();
  const finalizedSlot = reader.u64();
  return { status, createdTokenAccount, yesVotes, noVotes, amount, recipient, sourceMint, result, tokenAccount, finalizedSlot };
}

export function encodeWithdrawEntry(entry: WithdrawEntry): Uint8Array {
  const writer = new ByteWriter(WITHDRAW_ENTRY_SIZE)
    .u8(tagOf(WITHDRAW_STATUSES, entry.status, 'status'), 'status')
    .u8(tagOf(CREATED_TOKEN_ACCOUNT, entry.createdTokenAccount, 'createdTokenAccount'), 'createdTokenAccount')
    .u16(entry.yesVotes, 'yesVotes')
    .u16(entry.noVotes, 'noVotes')
    .zeros(2)
    .u64(entry.amount, 'amount')
    .base58(entry.recipient, 'recipient')
    .base58(entry.sourceMint, 'sourceMint');
  writeDepositResult(writer, entry.result, 'result');
  return writer.base58(entry.tokenAccount, 'tokenAccount').u64(entry.finalizedSlot, 'finalizedSlot').zeros(8).toBytes();
}

/** Entries `startIndex ..` from a window of consecutive records (a dataSlice of the tracker). */
export function decodeDepositEntries(data: Uint8Array, account: string, startIndex: number): DepositEntry[] {
  return decodeRun(data, account, startIndex, DEPOSIT_ENTRY_SIZE, decodeDepositEntry);
}

export function decodeWithdrawEntries(data: Uint8Array, account: string, startIndex: number): WithdrawEntry[] {
  return decodeRun(data, account, startIndex, WITHDRAW_ENTRY_SIZE, decodeWithdrawEntry);
}

function decodeRun<E>(
  data: Uint8Array,
  account: string,
  startIndex: number,
  size: number,
  decode: (record: Uint8Array, account: string, index: number) => E,
): E[] {
  if (data.length % size !== 0) {
    throw malformedAccount(account, `entries[${startIndex}..]`, `window has ${data.length} bytes, not a whole number of ${size}-byte records`);
  }
  return Array.from({ length: data.length / size }, (_, i) => decode(data.subarray(i * size, (i + 1) * size), account, startIndex + i));
}
