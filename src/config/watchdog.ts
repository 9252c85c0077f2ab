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
  /** BRIDGE_FLOW_LIMIT_<MINT>, one per source mint; none by default (no breaker). */
  flowLimits: FlowLimitSetting[];
}

export interface FlowLimitSetting {
  mint: string;
  amount: bigint;
  windowMs: number;
}

/** Variables named after a source mint: BRIDGE_FLOW_LIMIT_<base58 mint>=<amount>/<hours>. */
export const FLOW_LIMIT_PREFIX = 'BRIDGE_FLOW_LIMIT_';
const MAX_FLOW_HOURS = 8_760;
const U64_MAX = 2n ** 64n - 1n;

/**
 * The flow limits of `env`: each variable's mint must be a base58 key of 32 bytes (checked by
 * length and alphabet here; a wrong one limits a mint nobody sends), the value `<amount>/<hours>`
 * with amount 1..2^64-1 base units and hours 1..8760. A limit needs BRIDGE_WATCHDOG_FILE: the
 * operator's releases are kept there.
 */
export function flowLimitsFrom(env: Readonly<Record<string, string | undefined>>): { limits: FlowLimitSetting[]; problems: string[] } {
  const limits: FlowLimitSetting[] = [];
  const problems: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(FLOW_LIMIT_PREFIX) || value === undefined || value === '') continue;
    const mint = name.slice(FLOW_LIMIT_PREFIX.length);
    const match = /^(\d+)\/(\d+)$/.exec(value);
    if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(mint)) problems.push(`${name}: the name must end in a base58 source mint`);
    else if (match === null || BigInt(match[1]!) < 1n || BigInt(match[1]!) > U64_MAX || Number(match[2]) < 1 || Number(match[2]) > MAX_FLOW_HOURS) {
      problems.push(
        `${name}: expected <amount>/<hours>, amount 1..${U64_MAX} base units of the mint, hours 1..${MAX_FLOW_HOURS} (e.g. 1000000000/24)`,
      );
    } else limits.push({ mint, amount: BigInt(match[1]!), windowMs: Number(match[2]) * 3_600_000 });
  }
  if (limits.length > 0 && env['BRIDGE_WATCHDOG_FILE'] === undefined) {
    problems.push(
      `BRIDGE_WATCHDOG_FILE: missing; a flow limit (${FLOW_LIMIT_PREFIX}<MINT>) keeps the releases an operator makes (npm run ops -- flow release) in this file`,
    );
  }
  return { limits, problems };
}

/** halt must survive a restart: without the file a restart would silently clear it. */
export function watchdogProblems(set: Partial<Record<string, string>>): string[] {
  if (set['BRIDGE_ON_INVARIANT_BREACH'] !== 'halt' || set['BRIDGE_WATCHDOG_FILE'] !== undefined) return [];
  return [
    'BRIDGE_WATCHDOG_FILE: missing; BRIDGE_ON_INVARIANT_BREACH=halt keeps the breach it halts on, and its acknowledgement, in this file so that a restart neither clears nor wrongly keeps the halt; set a path on a persistent volume',
  ];
}

export function toWatchdog(
  flowLimits: FlowLimitSetting[],
  values: {
    BRIDGE_ON_INVARIANT_BREACH: WatchdogConfig['onInvariantBreach'];
    BRIDGE_WATCHDOG_FILE?: string | undefined;
    BRIDGE_SOURCE_PROGRAM_HASH?: string | undefined;
    BRIDGE_TARGET_PROGRAM_HASH?: string | undefined;
  },
): WatchdogConfig {
  return {
    onInvariantBreach: values.BRIDGE_ON_INVARIANT_BREACH,
    watchdogFile: values.BRIDGE_WATCHDOG_FILE,
    programHashes: {
      ...(values.BRIDGE_SOURCE_PROGRAM_HASH === undefined ? {} : { source: values.BRIDGE_SOURCE_PROGRAM_HASH }),
      ...(values.BRIDGE_TARGET_PROGRAM_HASH === undefined ? {} : { target: values.BRIDGE_TARGET_PROGRAM_HASH }),
    },
    flowLimits,
  };
}
