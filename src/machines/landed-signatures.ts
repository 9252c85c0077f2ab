import { isBridgeError } from '../errors.js';

/**
 * Transactions of a failed action that landed (CHAIN__FAILED_TO_SUBMIT): those that landed
 * before the failure and, when the failure is a transaction that landed with an error
 * (outcome `landed_with_error`, naming its signature), that one too: it is on chain and its fee
 * was paid. An `unknown` outcome's signature is a transaction that may still land.
 */
export function landedSignaturesOf(error: unknown): string[] {
  if (!isBridgeError(error, 'CHAIN__FAILED_TO_SUBMIT')) return [];
  const { landedSignatures, signature } = error.context;
  if (error.context.outcome !== 'landed_with_error' || signature === undefined || landedSignatures.includes(signature)) return landedSignatures;
  return [...landedSignatures, signature];
}
