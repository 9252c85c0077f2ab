import { BridgeError } from '../../errors.js';
import { ByteReader, bytesEqual, toHex } from './bytes.js';
import { ACCOUNT_DISCRIMINATORS, DISCRIMINATOR_SIZE, type AccountName } from './layout.js';

/** Typed errors for account bytes that do not match PROTOCOL.md, and the checks that raise them. */

const LAYOUT_HINT = 'the account does not match the bridge program layout (PROTOCOL.md v1); check the configured program id and chain ids';

export function malformedAccount(account: string, field: string, reason: string): BridgeError<'CHAIN__MALFORMED_ACCOUNT'> {
  return new BridgeError('CHAIN__MALFORMED_ACCOUNT', { account, field, reason }, { hint: LAYOUT_HINT });
}

/** A reader over one account record whose short reads name the account and record. */
export function accountReader(data: Uint8Array, account: string, record: string): ByteReader {
  return new ByteReader(data, (offset, size, available) =>
    malformedAccount(account, record, `is too short: needs ${size} bytes at offset ${offset}, ${available} remain`),
  );
}

/** Throws unless `data` holds at least `size` bytes (`exact`: exactly `size`). */
export function checkLength(data: Uint8Array, size: number, where: { account: string; field: string; exact?: boolean }): void {
  const ok = where.exact === true ? data.length === size : data.length >= size;
  if (ok) return;
  const wanted = where.exact === true ? `exactly ${size}` : `at least ${size}`;
  throw malformedAccount(where.account, where.field, `has ${data.length} bytes, expected ${wanted}`);
}

export function checkDiscriminator(data: Uint8Array, name: AccountName, account: string): void {
  checkLength(data, DISCRIMINATOR_SIZE, { account, field: 'discriminator' });
  const expected = ACCOUNT_DISCRIMINATORS[name];
  const actual = data.subarray(0, DISCRIMINATOR_SIZE);
  if (bytesEqual(actual, expected)) return;
  throw new BridgeError(
    'CHAIN__INVALID_DISCRIMINATOR',
    { account, expected: toHex(expected), actual: toHex(actual) },
    { accountType: name, hint: LAYOUT_HINT },
  );
}

/** Maps an on-chain u8 to its name in `table`, or throws naming the account and field. */
export function decodeTag<T extends string>(table: readonly T[], tag: number, account: string, field: string): T {
  const value = table[tag];
  if (value === undefined) {
    throw malformedAccount(account, field, `has unknown tag ${tag} (known: ${table.map((name, i) => `${i} ${name}`).join(', ')})`);
  }
  return value;
}

/** A u8 flag that must be 0 or 1. */
export function decodeFlag(value: number, account: string, field: string): boolean {
  if (value === 0 || value === 1) return value === 1;
  throw malformedAccount(account, field, `is ${value}, expected 0 or 1`);
}
