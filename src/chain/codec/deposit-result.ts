import type { DepositResult } from '../types.js';
import { accountReader, checkLength, decodeTag, malformedAccount } from './account-errors.js';
import { ByteWriter, type ByteReader } from './bytes.js';
import { DEPOSIT_RESULT_KINDS, DEPOSIT_RESULT_SIZE, REJECTION_REASONS, tagOf } from './layout.js';

/**
 * DepositResult (16 bytes): tag u8, reason u8, 6 reserved, amount u64. Inside accounts the
 * program only ever writes canonical values, so anything else is a malformed account. As an
 * instruction argument the raw fields are kept (DepositResultArg) so that the program, not the
 * decoder, reports InvalidResult.
 */

/** The 16 bytes of a DepositResult argument as sent; reserved bytes are ignored. */
export interface DepositResultArg {
  tag: number;
  reason: number;
  amount: bigint;
}

export interface FieldLocation {
  account: string;
  field: string;
}

export function readDepositResultArg(reader: ByteReader): DepositResultArg {
  const tag = reader.u8();
  const reason = reader.u8();
  reader.skip(6);
  const amount = reader.u64();
  return { tag, reason, amount };
}

export function writeDepositResultArg(writer: ByteWriter, arg: DepositResultArg, field: string): void {
  writer.u8(arg.tag, `${field}.tag`).u8(arg.reason, `${field}.reason`).zeros(6).u64(arg.amount, `${field}.amount`);
}

export function depositResultToArg(result: DepositResult): DepositResultArg {
  const tag = tagOf(DEPOSIT_RESULT_KINDS, result.kind, 'result.kind');
  switch (result.kind) {
    case 'None':
      return { tag, reason: 0, amount: 0n };
    case 'Confirmed':
      return { tag, reason: 0, amount: result.amount };
    case 'Rejected':
      return { tag, reason: tagOf(REJECTION_REASONS, result.reason, 'result.reason'), amount: 0n };
  }
}

/** PROTOCOL.md's InvalidResult rules for an argument: `undefined` means the program rejects it. */
export function depositResultFromArg(arg: DepositResultArg): DepositResult | undefined {
  const kind = DEPOSIT_RESULT_KINDS[arg.tag];
  if (kind === 'Confirmed' && arg.reason === 0) return { kind, amount: arg.amount };
  const reason = REJECTION_REASONS[arg.reason];
  if (kind === 'Rejected' && arg.amount === 0n && reason !== undefined) return { kind, reason };
  return undefined;
}

/** Reads a DepositResult stored in an account; non-canonical values name the account and field. */
export function readDepositResult(reader: ByteReader, where: FieldLocation): DepositResult {
  const { tag, reason, amount } = readDepositResultArg(reader);
  const { account, field } = where;
  const kind = decodeTag(DEPOSIT_RESULT_KINDS, tag, account, `${field}.tag`);
  if (kind === 'Rejected') {
    const rejection = decodeTag(REJECTION_REASONS, reason, account, `${field}.reason`);
    if (amount !== 0n) throw malformedAccount(account, `${field}.amount`, `is ${amount}, expected 0 when tag is Rejected`);
    return { kind, reason: rejection };
  }
  if (reason !== 0) throw malformedAccount(account, `${field}.reason`, `is ${reason}, expected 0 when tag is ${kind}`);
  if (kind === 'Confirmed') return { kind, amount };
  if (amount !== 0n) throw malformedAccount(account, `${field}.amount`, `is ${amount}, expected 0 when tag is None`);
  return { kind };
}

export function writeDepositResult(writer: ByteWriter, result: DepositResult, field: string): void {
  writeDepositResultArg(writer, depositResultToArg(result), field);
}

/** Decodes the 16 bytes of a DepositResult stored in an account. */
export function decodeDepositResult(bytes16: Uint8Array, where: FieldLocation): DepositResult {
  checkLength(bytes16, DEPOSIT_RESULT_SIZE, { ...where, exact: true });
  return readDepositResult(accountReader(bytes16, where.account, where.field), where);
}

export function encodeDepositResult(result: DepositResult): Uint8Array {
  const writer = new ByteWriter(DEPOSIT_RESULT_SIZE);
  writeDepositResult(writer, result, 'result');
  return writer.toBytes();
}
