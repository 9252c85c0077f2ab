import bs58 from 'bs58';
import { isCommitment } from '../bank/commitment-banks.js';
import { RPC_ERRORS, RpcError, invalidParams } from './errors.js';

/**
 * Parameter checks for the JSON-RPC methods. Every message names the parameter. Unknown
 * config fields are ignored, as a Solana node does; known ones are checked.
 */

export type Config = Record<string, unknown>;

export function paramList(params: unknown): unknown[] {
  if (params === undefined || params === null) return [];
  if (!Array.isArray(params)) throw invalidParams('Invalid params: `params` must be an array');
  return params;
}

export function configParam(value: unknown, name: string): Config {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidParams(`Invalid params: ${name} must be an object`);
  return value as Config;
}

export function stringParam(value: unknown, name: string): string {
  if (typeof value !== 'string') throw invalidParams(`Invalid params: ${name} must be a string`);
  return value;
}

/** A base58 string of exactly `size` bytes (32: a public key, 64: a signature). */
export function base58Param(value: unknown, name: string, size: 32 | 64): string {
  const text = stringParam(value, name);
  let bytes: Uint8Array | undefined;
  try {
    bytes = bs58.decode(text);
  } catch {
    bytes = undefined;
  }
  if (bytes?.length !== size) throw invalidParams(`Invalid param: ${name} ${JSON.stringify(text)} is not a base58-encoded ${size}-byte value`);
  return text;
}

export function arrayParam(value: unknown, name: string, max: number): unknown[] {
  if (!Array.isArray(value)) throw invalidParams(`Invalid params: ${name} must be an array`);
  if (value.length > max) throw invalidParams(`Too many inputs provided; max ${max} (${name})`);
  return value;
}

export function integerParam(value: unknown, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidParams(`Invalid params: ${name} must be an integer in ${min} ..= ${max}`);
  }
  return value;
}

export function booleanParam(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw invalidParams(`Invalid params: ${name} must be a boolean`);
  return value;
}

/** A commitment a node accepts (legacy names included), or undefined when none is given. */
export function checkCommitment(config: Config, field = 'commitment'): string | undefined {
  const value = config[field];
  if (value === undefined || value === null) return undefined;
  if (!isCommitment(value)) {
    throw invalidParams(`Invalid params: ${field} must be one of processed, confirmed, finalized; got ${JSON.stringify(value)}`);
  }
  return value;
}

export function checkMinContextSlot(config: Config, slot: number): void {
  const value = config['minContextSlot'];
  if (value === undefined || value === null) return;
  const minContextSlot = integerParam(value, 'minContextSlot');
  if (minContextSlot > slot) {
    throw new RpcError(RPC_ERRORS.MIN_CONTEXT_SLOT_NOT_REACHED, 'Minimum context slot has not been reached', { contextSlot: slot });
  }
}
