import { expect } from 'vitest';
import { BridgeError, type BridgeErrorCode } from '../../../src/errors.js';

/** Runs `fn`, asserts it throws BridgeError `code`, and returns the error for further checks. */
export function thrownBridgeError<C extends BridgeErrorCode>(fn: () => unknown, code: C): BridgeError<C> {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(BridgeError);
  const error = caught as BridgeError;
  expect(error.code).toBe(code);
  return error as BridgeError<C>;
}

/** Asserts a CHAIN__MALFORMED_ACCOUNT naming `account` and `field` in its context and message. */
export function expectMalformedAccount(fn: () => unknown, account: string, field: string): BridgeError<'CHAIN__MALFORMED_ACCOUNT'> {
  const error = thrownBridgeError(fn, 'CHAIN__MALFORMED_ACCOUNT');
  expect(error.context.account).toBe(account);
  expect(error.context.field).toBe(field);
  expect(error.message).toContain(account);
  expect(error.message).toContain(field);
  return error;
}
