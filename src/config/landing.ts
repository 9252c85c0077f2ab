import * as z from 'zod';
import { priorityFeeLamports } from '../chain/fee-rate.js';
import { integerValue, publicKeyValue, rpcUrlListValue, rpcUrlValue } from './values.js';

/**
 * The landing variables (docs/configuration.md, "Extensions"): send-only paths, an optional tip
 * and an optional fee estimate source per chain. A part of the server's one schema (./config.ts), kept here so each file stays
 * small.
 */

/** The largest limit a transaction requests (compute-budget.ts's MAX_COMPUTE_UNIT_LIMIT; a leaf here). */
const MAX_TRANSACTION_UNITS = 1_400_000;

/** Lamports: far above any path's tip (Jito's floor is 1,000, Helius Sender's 1,000,000), below 2^53. */
const MAX_TIP_LAMPORTS = 1_000_000_000n;

export const landingSchemaShape = {
  BRIDGE_SOURCE_SEND_URLS: rpcUrlListValue().prefault(''),
  BRIDGE_TARGET_SEND_URLS: rpcUrlListValue().prefault(''),
  BRIDGE_SOURCE_TIP_LAMPORTS: integerValue(0n, MAX_TIP_LAMPORTS).transform(Number).prefault('0'),
  BRIDGE_TARGET_TIP_LAMPORTS: integerValue(0n, MAX_TIP_LAMPORTS).transform(Number).prefault('0'),
  BRIDGE_SOURCE_TIP_ACCOUNT: publicKeyValue().optional(),
  BRIDGE_TARGET_TIP_ACCOUNT: publicKeyValue().optional(),
  BRIDGE_SOURCE_FEE_ESTIMATE_URL: rpcUrlValue().optional(),
  BRIDGE_TARGET_FEE_ESTIMATE_URL: rpcUrlValue().optional(),
};

export const LANDING_DEFAULTS = {
  BRIDGE_SOURCE_TIP_LAMPORTS: '0',
  BRIDGE_TARGET_TIP_LAMPORTS: '0',
} as const;

/** A transfer of `lamports` to `account` inside every transaction of a chain. */
interface Tip {
  account: string;
  lamports: number;
}

/** One chain's landing settings. */
export interface ChainLanding {
  /** BRIDGE_*_SEND_URLS: endpoints that receive every signed transaction and are never read. */
  sendUrls: string[];
  /** BRIDGE_*_TIP_LAMPORTS to BRIDGE_*_TIP_ACCOUNT; undefined without a tip. */
  tip: Tip | undefined;
  /** BRIDGE_*_FEE_ESTIMATE_URL: a getPriorityFeeEstimate endpoint beside the fee history; undefined without one. */
  feeEstimateUrl?: string;
}

type LandingValues = z.output<z.ZodObject<typeof landingSchemaShape>>;

export function toLanding(values: LandingValues): { source: ChainLanding; target: ChainLanding } {
  const tipOf = (lamports: number, account: string | undefined): Tip | undefined => (lamports > 0 && account !== undefined ? { account, lamports } : undefined);
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
 * A tip needs its account and an account its tip; the tip is counted within the lamports a
 * transaction may pay above its signature (the cap x the largest limit), so it cannot exceed it.
 */
export function tipProblems(set: Readonly<Record<string, string | undefined>>, capMicroLamports: string): string[] {
  const problems: string[] = [];
  for (const chain of ['SOURCE', 'TARGET']) {
    const lamportsName = `BRIDGE_${chain}_TIP_LAMPORTS`;
    const accountName = `BRIDGE_${chain}_TIP_ACCOUNT`;
    const lamports = set[lamportsName];
    const tipped = lamports !== undefined && /^\d+$/.test(lamports) && BigInt(lamports) > 0n;
    if (tipped && set[accountName] === undefined) problems.push(`${accountName}: missing; ${lamportsName} is set, and a tip needs the account it is paid to`);
    if (!tipped && set[accountName] !== undefined) problems.push(`${lamportsName}: missing; ${accountName} is set, and names no tip without an amount above 0`);
    if (!tipped || !/^\d+$/.test(capMicroLamports)) continue;
    const most = priorityFeeLamports(Number(BigInt(capMicroLamports)), MAX_TRANSACTION_UNITS);
    if (BigInt(lamports) > BigInt(most)) {
      problems.push(
        `${lamportsName}: ${lamports} is above the ${most} lamports a transaction may pay besides its signature fee (BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS x 1,400,000 CU), within which the tip is counted; raise the cap or lower the tip`,
      );
    }
  }
  return problems;
}
