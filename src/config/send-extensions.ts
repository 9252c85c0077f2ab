import type * as z from 'zod';
import type { SendExtensions, Tip } from '../chain/chain-settings.js';
import { integerValue, publicKeyListValue, rpcUrlListValue, rpcUrlValue } from './values.js';

/**
 * The send extensions' variables (docs/configuration.md, "Extensions"): send-only paths, an
 * optional tip and an optional fee estimate source per chain. A part of the server's one schema
 * (./config.ts), kept here so each file stays small.
 */

/** Lamports: far above any path's tip (docs/configuration.md, "Tip minimums"), below 2^53. */
const MAX_TIP_LAMPORTS = 1_000_000_000n;

/**
 * BRIDGE_*_TIP_MAX_LAMPORTS when unset: 0.001 SOL, the highest minimum a provider documents
 * (Helius Sender Max), so that any documented minimum fits and a typo of a few digits does not.
 */
const DEFAULT_TIP_MAX_LAMPORTS = '1000000';

export const sendExtensionsSchemaShape = {
  BRIDGE_SOURCE_SEND_URLS: rpcUrlListValue().prefault(''),
  BRIDGE_TARGET_SEND_URLS: rpcUrlListValue().prefault(''),
  BRIDGE_SOURCE_TIP_LAMPORTS: integerValue(0n, MAX_TIP_LAMPORTS).transform(Number).prefault('0'),
  BRIDGE_TARGET_TIP_LAMPORTS: integerValue(0n, MAX_TIP_LAMPORTS).transform(Number).prefault('0'),
  BRIDGE_SOURCE_TIP_MAX_LAMPORTS: integerValue(0n, MAX_TIP_LAMPORTS).transform(Number).prefault(DEFAULT_TIP_MAX_LAMPORTS),
  BRIDGE_TARGET_TIP_MAX_LAMPORTS: integerValue(0n, MAX_TIP_LAMPORTS).transform(Number).prefault(DEFAULT_TIP_MAX_LAMPORTS),
  BRIDGE_SOURCE_TIP_ACCOUNT: publicKeyListValue().prefault(''),
  BRIDGE_TARGET_TIP_ACCOUNT: publicKeyListValue().prefault(''),
  BRIDGE_SOURCE_FEE_ESTIMATE_URL: rpcUrlValue().optional(),
  BRIDGE_TARGET_FEE_ESTIMATE_URL: rpcUrlValue().optional(),
};

export const SEND_EXTENSIONS_DEFAULTS = {
  BRIDGE_SOURCE_TIP_LAMPORTS: '0',
  BRIDGE_TARGET_TIP_LAMPORTS: '0',
  BRIDGE_SOURCE_TIP_MAX_LAMPORTS: DEFAULT_TIP_MAX_LAMPORTS,
  BRIDGE_TARGET_TIP_MAX_LAMPORTS: DEFAULT_TIP_MAX_LAMPORTS,
} as const;

type SendExtensionsValues = z.output<z.ZodObject<typeof sendExtensionsSchemaShape>>;

export function toSendExtensions(values: SendExtensionsValues): { source: SendExtensions; target: SendExtensions } {
  const tipOf = (lamports: number, accounts: string[]): Tip | undefined => (lamports > 0 && accounts.length > 0 ? { accounts, lamports } : undefined);
  return {
    source: {
      sendUrls: values.BRIDGE_SOURCE_SEND_URLS,
      tip: tipOf(values.BRIDGE_SOURCE_TIP_LAMPORTS, values.BRIDGE_SOURCE_TIP_ACCOUNT),
      ...(values.BRIDGE_SOURCE_FEE_ESTIMATE_URL === undefined ? {} : { feeEstimateUrl: values.BRIDGE_SOURCE_FEE_ESTIMATE_URL }),
    },
    target: {
      sendUrls: values.BRIDGE_TARGET_SEND_URLS,
      tip: tipOf(values.BRIDGE_TARGET_TIP_LAMPORTS, values.BRIDGE_TARGET_TIP_ACCOUNT),
      ...(values.BRIDGE_TARGET_FEE_ESTIMATE_URL === undefined ? {} : { feeEstimateUrl: values.BRIDGE_TARGET_FEE_ESTIMATE_URL }),
    },
  };
}

/**
 * A tip needs its accounts and accounts their tip; the tip is paid on top of the priority fee
 * (the fee is bid as without it), within its own cap, BRIDGE_*_TIP_MAX_LAMPORTS. Which accounts
 * a tip may go to is checked once the authority key is known (src/chain/client/budget/tip.ts).
 */
export function tipProblems(set: Readonly<Record<string, string | undefined>>): string[] {
  const problems: string[] = [];
  for (const chain of ['SOURCE', 'TARGET']) {
    const lamportsName = `BRIDGE_${chain}_TIP_LAMPORTS`;
    const maxName = `BRIDGE_${chain}_TIP_MAX_LAMPORTS`;
    const accountName = `BRIDGE_${chain}_TIP_ACCOUNT`;
    const lamports = set[lamportsName];
    const max = set[maxName] ?? DEFAULT_TIP_MAX_LAMPORTS;
    const tipped = lamports !== undefined && /^\d+$/.test(lamports) && BigInt(lamports) > 0n;
    if (tipped && set[accountName] === undefined)
      problems.push(`${accountName}: missing; ${lamportsName} is set, and a tip needs the accounts it is paid to`);
    if (!tipped && set[accountName] !== undefined)
      problems.push(`${lamportsName}: missing; ${accountName} is set, and names no tip without an amount above 0`);
    if (tipped && /^\d+$/.test(max) && BigInt(lamports) > BigInt(max)) {
      problems.push(
        `${lamportsName}: ${lamports} is above ${maxName} (${max}), the most a transaction of this chain pays in tip; lower the tip or raise ${maxName}`,
      );
    }
  }
  return problems;
}
