import * as z from 'zod';
import { enumValue } from './values.js';

/**
 * The watchdog's variables (docs/configuration.md, "Extensions"; docs/operating.md "The
 * watchdog"). A part of the server's one schema (./config.ts), kept here so each file stays small.
 * What only reports is on by default; what can stop signing is opt-in.
 */

const BREACH_POLICIES = ['continue', 'halt'] as const;

const programHashValue = () =>
  z
    .string()
    .transform((value) => value.toLowerCase())
    .refine((value) => /^[0-9a-f]{64}$/.test(value), 'expected the sha256 of the program bytes, 64 hex digits (solana-verify get-program-hash)');

export const WATCHDOG_DEFAULTS = { BRIDGE_ON_INVARIANT_BREACH: 'continue' } as const;

export const watchdogSchemaShape = {
  BRIDGE_ON_INVARIANT_BREACH: enumValue(BREACH_POLICIES).prefault(WATCHDOG_DEFAULTS.BRIDGE_ON_INVARIANT_BREACH),
  BRIDGE_WATCHDOG_FILE: z.string().optional(),
  BRIDGE_SOURCE_PROGRAM_HASH: programHashValue().optional(),
  BRIDGE_TARGET_PROGRAM_HASH: programHashValue().optional(),
};

export interface WatchdogConfig {
  /** BRIDGE_ON_INVARIANT_BREACH: report a breach, or also hold every vote until it is acknowledged. */
  onInvariantBreach: (typeof BREACH_POLICIES)[number];
  /** BRIDGE_WATCHDOG_FILE: where breaches and their acknowledgements are kept; needed by halt. */
  watchdogFile: string | undefined;
  /** BRIDGE_<CHAIN>_PROGRAM_HASH, per chain; absent: the hash is reported, not enforced. */
  programHashes: Partial<Record<'source' | 'target', string>>;
}

/** halt must survive a restart: without the file a restart would silently clear it. */
export function watchdogProblems(set: Partial<Record<string, string>>): string[] {
  if (set['BRIDGE_ON_INVARIANT_BREACH'] !== 'halt' || set['BRIDGE_WATCHDOG_FILE'] !== undefined) return [];
  return [
    'BRIDGE_WATCHDOG_FILE: missing; BRIDGE_ON_INVARIANT_BREACH=halt keeps the breach it halts on, and its acknowledgement, in this file so that a restart neither clears nor wrongly keeps the halt; set a path on a persistent volume',
  ];
}

export function toWatchdog(values: { BRIDGE_ON_INVARIANT_BREACH: WatchdogConfig['onInvariantBreach']; BRIDGE_WATCHDOG_FILE?: string | undefined; BRIDGE_SOURCE_PROGRAM_HASH?: string | undefined; BRIDGE_TARGET_PROGRAM_HASH?: string | undefined }): WatchdogConfig {
  return {
    onInvariantBreach: values.BRIDGE_ON_INVARIANT_BREACH,
    watchdogFile: values.BRIDGE_WATCHDOG_FILE,
    programHashes: {
      ...(values.BRIDGE_SOURCE_PROGRAM_HASH === undefined ? {} : { source: values.BRIDGE_SOURCE_PROGRAM_HASH }),
      ...(values.BRIDGE_TARGET_PROGRAM_HASH === undefined ? {} : { target: values.BRIDGE_TARGET_PROGRAM_HASH }),
    },
  };
}
