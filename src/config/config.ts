import * as z from 'zod';
import { DEFAULT_PROGRAM_ID } from '../chain/codec/layout.js';
import { DEFAULT_UNITS_PER_INSTRUCTION, LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../chain/fee-rate.js';
import { BridgeError } from '../errors.js';
import { MAX_NONCE_ACCOUNTS, type SendExtensions } from '../chain/chain-settings.js';
import { SEND_EXTENSIONS_DEFAULTS, sendExtensionsSchemaShape, tipProblems, toSendExtensions } from './send-extensions.js';
import { partialAuthProblems, partialRuntimeProblems, requiredCrankProblems } from './variable-sets.js';
import {
  FLOW_LIMIT_PREFIX,
  flowLimitsFrom,
  toWatchdog,
  WATCHDOG_DEFAULTS,
  watchdogProblems,
  watchdogSchemaShape,
  type WatchdogConfig,
} from './watchdog.js';
import {
  bindAddressValue,
  booleanValue,
  enumValue,
  hostNameListValue,
  integerValue,
  publicKeyValue,
  rpcUrlListValue,
  rpcUrlValue,
  u16Value,
  u64DurationValue,
  websocketUrlValue,
  type BindAddress,
} from './values.js';

/**
 * The server's whole configuration, read once at startup from the environment (SPEC §2.1 and
 * §7 plus the documented extensions). Any problem is a startup error listing one line per
 * problem, each starting with the variable's name.
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export const READ_COMMITMENTS = ['finalized', 'confirmed'] as const;
type ReadCommitment = (typeof READ_COMMITMENTS)[number];

const FOREIGN_SIGNER_POLICIES = ['continue', 'halt'] as const;
export type ForeignSignerPolicy = (typeof FOREIGN_SIGNER_POLICIES)[number];

/** Defaults of the optional variables, as the raw strings an operator would write. */
export const DEFAULTS = {
  BRIDGE_REQUIRE_CRANK: 'false',
  BRIDGE_POLL_INTERVAL_SECS: '15',
  BRIDGE_CRANK_MAX_ATTEMPTS: '3',
  BRIDGE_CRANK_RETRY_BACKOFF_MS: '1000',
  BRIDGE_SOURCE_PROGRAM_ID: DEFAULT_PROGRAM_ID,
  BRIDGE_TARGET_PROGRAM_ID: DEFAULT_PROGRAM_ID,
  BRIDGE_RPC_TIMEOUT_MS: '10000',
  // solana-validator's --health-check-slot-distance default: a node this far behind calls itself unhealthy.
  BRIDGE_RPC_MAX_SLOT_LAG: '128',
  BRIDGE_SOURCE_READ_COMMITMENT: 'finalized',
  BRIDGE_LOG_LEVEL: 'info',
  // Cloud Run and `docker stop` kill the container 10 s after SIGTERM: finish inside that.
  BRIDGE_SHUTDOWN_TIMEOUT_MS: '8000',
  BRIDGE_ON_FOREIGN_SIGNER: 'continue',
  // Longer than a rollout's overlap, shorter than an incident (docs/crank.md, "Role").
  BRIDGE_HANDOFF_SECS: '300',
  BRIDGE_DRY_RUN: 'false',
  BRIDGE_TRANSFER_WAIT_ALERT_SECS: '600',
  BRIDGE_MAX_CONNECTIONS_PER_ADDRESS: '32',
  BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS: '0',
  // docs/configuration.md "Extensions": at the cap a one-vote transaction (about 28,000 CU measured) pays
  // 2,800 lamports of priority, a full 1,400,000-CU one 140,000 (0.00014 SOL).
  BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: '100000',
  // One lane per crank action of the busier chain (the source runs ack_withdraw and cleanup_deposit).
  BRIDGE_NONCE_ACCOUNTS: '2',
  ...SEND_EXTENSIONS_DEFAULTS,
  ...WATCHDOG_DEFAULTS,
} as const;

const DAY_MS = 86_400_000;
// With no (or a sub-second) poll interval, cycles still take about a second each.
const MIN_CYCLE_MS = 1_000;

/**
 * BRIDGE_MIN_BALANCE_LAMPORTS when unset: a day of fees at one one-signature transaction per
 * chain per poll interval, each bidding the priority fee cap on the default reservation of one
 * instruction (200,000 CU) and paying the larger chain's tip on top (BRIDGE_*_TIP_LAMPORTS):
 * 144,000,000 lamports at the default 15 s and cap of 100,000 without a tip.
 */
export function defaultMinBalanceLamports(pollIntervalMs: number, priorityFeeCapMicroLamports: number, tipLamports = 0): number {
  const perTransaction = LAMPORTS_PER_SIGNATURE + priorityFeeLamports(priorityFeeCapMicroLamports, DEFAULT_UNITS_PER_INSTRUCTION) + tipLamports;
  return Math.ceil(DAY_MS / Math.max(pollIntervalMs, MIN_CYCLE_MS)) * perTransaction;
}

/**
 * Open connections the HTTP server holds in all (src/http/app.ts); beyond it a new one is closed
 * at once. Here because BRIDGE_MAX_CONNECTIONS_PER_ADDRESS is checked against it.
 */
export const MAX_CONNECTIONS = 256;

// Micro-lamports per CU: 1,000 lamports per CU, far beyond any cluster's price.
const MAX_PRIORITY_FEE = 1_000_000_000n;

const DEFAULT_BIND_HOST = '0.0.0.0';
const DEFAULT_PORT = 8080;

/** RFC 7617: the user-id cannot contain a colon; neither part may contain control characters. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

const usernameValue = () =>
  z.string().superRefine((raw, ctx) => {
    if (raw.includes(':')) ctx.addIssue('must not contain ":" (HTTP Basic auth cannot carry it in a user name)');
    if (CONTROL_CHARACTERS.test(raw)) ctx.addIssue('must not contain control characters');
  });

const passwordValue = () => z.string().refine((raw) => !CONTROL_CHARACTERS.test(raw), { error: 'must not contain control characters' });

const envSchema = z.object({
  BRIDGE_BIND_ADDRESS: bindAddressValue().optional(),
  PORT: u16Value().optional(),
  BRIDGE_ALLOWED_HOSTS: hostNameListValue().prefault(''),
  BRIDGE_MAX_CONNECTIONS_PER_ADDRESS: integerValue(1n, BigInt(MAX_CONNECTIONS))
    .transform(Number)
    .prefault(DEFAULTS.BRIDGE_MAX_CONNECTIONS_PER_ADDRESS),
  BRIDGE_AUTH_USERNAME: usernameValue().optional(),
  BRIDGE_AUTH_PASSWORD: passwordValue().optional(),
  BRIDGE_SOURCE_RPC_URL: rpcUrlValue().optional(),
  BRIDGE_TARGET_RPC_URL: rpcUrlValue().optional(),
  BRIDGE_SOURCE_CHAIN_ID: u16Value().optional(),
  BRIDGE_TARGET_CHAIN_ID: u16Value().optional(),
  BRIDGE_AUTHORITY_KEYPAIR: z.string().optional(),
  BRIDGE_REQUIRE_CRANK: booleanValue().prefault(DEFAULTS.BRIDGE_REQUIRE_CRANK),
  BRIDGE_POLL_INTERVAL_SECS: u64DurationValue('seconds').prefault(DEFAULTS.BRIDGE_POLL_INTERVAL_SECS),
  BRIDGE_CRANK_MAX_ATTEMPTS: integerValue(1n, 4294967295n, 'an integer 1..4294967295 (at least one attempt)')
    .transform(Number)
    .prefault(DEFAULTS.BRIDGE_CRANK_MAX_ATTEMPTS),
  BRIDGE_CRANK_RETRY_BACKOFF_MS: u64DurationValue('milliseconds').prefault(DEFAULTS.BRIDGE_CRANK_RETRY_BACKOFF_MS),
  BRIDGE_SOURCE_PROGRAM_ID: publicKeyValue().prefault(DEFAULTS.BRIDGE_SOURCE_PROGRAM_ID),
  BRIDGE_TARGET_PROGRAM_ID: publicKeyValue().prefault(DEFAULTS.BRIDGE_TARGET_PROGRAM_ID),
  BRIDGE_RPC_TIMEOUT_MS: integerValue(1n, 2147483647n).transform(Number).prefault(DEFAULTS.BRIDGE_RPC_TIMEOUT_MS),
  BRIDGE_SOURCE_RPC_FALLBACK_URLS: rpcUrlListValue().prefault(''),
  BRIDGE_TARGET_RPC_FALLBACK_URLS: rpcUrlListValue().prefault(''),
  BRIDGE_RPC_MAX_SLOT_LAG: integerValue(1n, 2147483647n).transform(Number).prefault(DEFAULTS.BRIDGE_RPC_MAX_SLOT_LAG),
  BRIDGE_SOURCE_READ_COMMITMENT: enumValue(READ_COMMITMENTS).prefault(DEFAULTS.BRIDGE_SOURCE_READ_COMMITMENT),
  BRIDGE_LOG_LEVEL: enumValue(LOG_LEVELS).prefault(DEFAULTS.BRIDGE_LOG_LEVEL),
  BRIDGE_SHUTDOWN_TIMEOUT_MS: integerValue(0n, 2147483647n).transform(Number).prefault(DEFAULTS.BRIDGE_SHUTDOWN_TIMEOUT_MS),
  BRIDGE_XSTATE_INSPECT: websocketUrlValue().optional(),
  // Balances travel as JS numbers: lamports up to 2^53-1 (about 9 million SOL).
  BRIDGE_MIN_BALANCE_LAMPORTS: integerValue(0n, 9007199254740991n).transform(Number).optional(),
  BRIDGE_ON_FOREIGN_SIGNER: enumValue(FOREIGN_SIGNER_POLICIES).prefault(DEFAULTS.BRIDGE_ON_FOREIGN_SIGNER),
  BRIDGE_HANDOFF_SECS: u64DurationValue('seconds').prefault(DEFAULTS.BRIDGE_HANDOFF_SECS),
  BRIDGE_DRY_RUN: booleanValue().prefault(DEFAULTS.BRIDGE_DRY_RUN),
  BRIDGE_TRANSFER_WAIT_ALERT_SECS: u64DurationValue('seconds').prefault(DEFAULTS.BRIDGE_TRANSFER_WAIT_ALERT_SECS),
  // price x 1,400,000 CU stays below 2^53.
  BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS: integerValue(0n, MAX_PRIORITY_FEE)
    .transform(Number)
    .prefault(DEFAULTS.BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS),
  BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: integerValue(0n, MAX_PRIORITY_FEE)
    .transform(Number)
    .prefault(DEFAULTS.BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS),
  BRIDGE_NONCE_ACCOUNTS: integerValue(0n, BigInt(MAX_NONCE_ACCOUNTS)).transform(Number).prefault(DEFAULTS.BRIDGE_NONCE_ACCOUNTS),
  ...sendExtensionsSchemaShape,
  ...watchdogSchemaShape,
});

export type ConfigVariable = keyof typeof envSchema.shape;

/** Every variable the server reads, in documentation order. */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape) as ConfigVariable[];

/** Everything the crank and the chain client need; present only with the five runtime variables. */
export interface CrankConfig {
  sourceRpcUrl: string;
  targetRpcUrl: string;
  /** Further endpoints of each chain, after the primary; empty by default. */
  sourceRpcFallbackUrls: string[];
  targetRpcFallbackUrls: string[];
  /** Slots an endpoint may fall behind the best endpoint of its chain before it is demoted. */
  rpcMaxSlotLag: number;
  sourceChainId: number;
  targetChainId: number;
  /** A Solana CLI keypair file's path or a PKCS#11 URI; opened by `loadAuthoritySigner`. */
  authorityKeypair: string;
  sourceProgramId: string;
  targetProgramId: string;
  pollIntervalMs: number;
  maxAttempts: number;
  retryBackoffMs: number;
  /** BRIDGE_RPC_TIMEOUT_MS: per RPC call; part of the worst-case cycle, and so of the `stalled` bound. */
  rpcTimeoutMs: number;
  sourceReadCommitment: ReadCommitment;
  /** BRIDGE_XSTATE_INSPECT: WebSocket URL of an inspector the operator runs. */
  inspectUrl: string | undefined;
  /** BRIDGE_MIN_BALANCE_LAMPORTS: below it on either chain, /health warns. */
  minBalanceLamports: number;
  /** BRIDGE_ON_FOREIGN_SIGNER: keep submitting, or stop until restart, once another signer shows. */
  onForeignSigner: ForeignSignerPolicy;
  /** BRIDGE_HANDOFF_SECS: how long a standby tolerates another active signer; 0: no handoff, sign from the start. */
  handoffMs: number;
  /** BRIDGE_DRY_RUN: read and plan every cycle, log what would be submitted, submit nothing. */
  dryRun: boolean;
  /** BRIDGE_TRANSFER_WAIT_ALERT_SECS: published for BridgeTransfersWaiting. */
  transferWaitAlertMs: number;
  /** BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS and BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS (the cap). */
  priorityFee: { minMicroLamports: number; maxMicroLamports: number };
  /** BRIDGE_NONCE_ACCOUNTS: durable-nonce accounts per chain; 0 keeps blockhash mode without looking for them. */
  nonceAccounts: number;
  /** BRIDGE_*_SEND_URLS and BRIDGE_*_TIP_LAMPORTS / _TIP_ACCOUNT, per chain (./landing.ts). */
  sendExtensions: Record<'source' | 'target', SendExtensions>;
  /** BRIDGE_ON_INVARIANT_BREACH, BRIDGE_WATCHDOG_FILE, BRIDGE_<CHAIN>_PROGRAM_HASH (./watchdog.ts). */
  watchdog: WatchdogConfig;
}

export interface Config {
  bind: BindAddress;
  /** Host names besides the bind address and loopback that admin requests may name (an ingress's). */
  allowedHosts: string[];
  /** Open connections one remote address may hold; MAX_CONNECTIONS in all. */
  maxConnectionsPerAddress: number;
  /** Undefined when admin endpoints rely on ingress restriction (SPEC §5). */
  adminAuth: { username: string; password: string } | undefined;
  logLevel: LogLevel;
  shutdownTimeoutMs: number;
  /** Undefined when no runtime variable is set: the crank is disabled. */
  crank: CrankConfig | undefined;
}

export interface ParsedConfig {
  config: Config;
  /** Things an operator should see in the startup log, but that do not stop the server. */
  warnings: string[];
}

type Env = Readonly<Record<string, string | undefined>>;

/** Reads the configuration from `env` (process.env in production). Throws CONFIG__INVALID. */
export function parseConfig(env: Env): ParsedConfig {
  const set = setVariables(env);
  const parsed = envSchema.safeParse(set);
  const flow = flowLimitsFrom(env);
  const problems = [...presenceProblems(set), ...flow.problems, ...(parsed.success ? [] : parsed.error.issues.map(issueLine))];
  if (!parsed.success || problems.length > 0) {
    const ordered = sortByVariable(problems);
    throw new BridgeError('CONFIG__INVALID', { problems: ordered }, { heading: 'invalid configuration' });
  }
  return { config: toConfig(parsed.data, flow.limits), warnings: unknownVariableWarnings(env) };
}

/** An empty value counts as unset, so that `VARIABLE=` in an env file switches a setting off. */
function setVariables(env: Env): SetVariables {
  const set: SetVariables = {};
  for (const name of CONFIG_VARIABLES) {
    const value = env[name];
    if (value !== undefined && value !== '') set[name] = value;
  }
  return set;
}

type SetVariables = Partial<Record<ConfigVariable, string>>;

function presenceProblems(set: SetVariables): string[] {
  return [
    ...partialRuntimeProblems(set),
    ...requiredCrankProblems(set),
    ...partialAuthProblems(set),
    ...priorityFeeBoundProblems(set),
    ...tipProblems(set),
    ...watchdogProblems(set),
  ];
}

/** The floor of the bid cannot be above its cap. */
function priorityFeeBoundProblems(set: SetVariables): string[] {
  const min = set.BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS ?? DEFAULTS.BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS;
  const max = set.BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS ?? DEFAULTS.BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS;
  if (!/^\d+$/.test(min) || !/^\d+$/.test(max) || BigInt(min) <= BigInt(max)) return [];
  return [
    `BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS: ${min} is above BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS (${max}); the floor of the bid cannot exceed its cap`,
  ];
}

function issueLine(issue: z.core.$ZodIssue): string {
  return `${issue.path.map(String).join('.')}: ${issue.message}`;
}

/** Documentation order, so that the lines read like .env.example (Array.sort is stable). */
function sortByVariable(problems: string[]): string[] {
  const rank = (line: string) => CONFIG_VARIABLES.indexOf(line.slice(0, line.indexOf(':')) as ConfigVariable);
  return [...problems].sort((a, b) => rank(a) - rank(b));
}

type EnvValues = z.output<typeof envSchema>;

function toConfig(values: EnvValues, flowLimits: WatchdogConfig['flowLimits']): Config {
  return {
    bind: values.BRIDGE_BIND_ADDRESS ?? { host: DEFAULT_BIND_HOST, port: values.PORT ?? DEFAULT_PORT },
    allowedHosts: values.BRIDGE_ALLOWED_HOSTS,
    maxConnectionsPerAddress: values.BRIDGE_MAX_CONNECTIONS_PER_ADDRESS,
    adminAuth:
      values.BRIDGE_AUTH_USERNAME !== undefined && values.BRIDGE_AUTH_PASSWORD !== undefined
        ? { username: values.BRIDGE_AUTH_USERNAME, password: values.BRIDGE_AUTH_PASSWORD }
        : undefined,
    logLevel: values.BRIDGE_LOG_LEVEL,
    shutdownTimeoutMs: values.BRIDGE_SHUTDOWN_TIMEOUT_MS,
    crank: toCrankConfig(values, flowLimits),
  };
}

function toCrankConfig(values: EnvValues, flowLimits: WatchdogConfig['flowLimits']): CrankConfig | undefined {
  const { BRIDGE_SOURCE_RPC_URL, BRIDGE_TARGET_RPC_URL, BRIDGE_SOURCE_CHAIN_ID, BRIDGE_TARGET_CHAIN_ID, BRIDGE_AUTHORITY_KEYPAIR } = values;
  if (
    BRIDGE_SOURCE_RPC_URL === undefined ||
    BRIDGE_TARGET_RPC_URL === undefined ||
    BRIDGE_SOURCE_CHAIN_ID === undefined ||
    BRIDGE_TARGET_CHAIN_ID === undefined ||
    BRIDGE_AUTHORITY_KEYPAIR === undefined
  ) {
    return undefined;
  }
  return {
    sourceRpcUrl: BRIDGE_SOURCE_RPC_URL,
    targetRpcUrl: BRIDGE_TARGET_RPC_URL,
    sourceRpcFallbackUrls: values.BRIDGE_SOURCE_RPC_FALLBACK_URLS,
    targetRpcFallbackUrls: values.BRIDGE_TARGET_RPC_FALLBACK_URLS,
    rpcMaxSlotLag: values.BRIDGE_RPC_MAX_SLOT_LAG,
    sourceChainId: BRIDGE_SOURCE_CHAIN_ID,
    targetChainId: BRIDGE_TARGET_CHAIN_ID,
    authorityKeypair: BRIDGE_AUTHORITY_KEYPAIR,
    sourceProgramId: values.BRIDGE_SOURCE_PROGRAM_ID,
    targetProgramId: values.BRIDGE_TARGET_PROGRAM_ID,
    pollIntervalMs: values.BRIDGE_POLL_INTERVAL_SECS,
    maxAttempts: values.BRIDGE_CRANK_MAX_ATTEMPTS,
    retryBackoffMs: values.BRIDGE_CRANK_RETRY_BACKOFF_MS,
    rpcTimeoutMs: values.BRIDGE_RPC_TIMEOUT_MS,
    sourceReadCommitment: values.BRIDGE_SOURCE_READ_COMMITMENT,
    inspectUrl: values.BRIDGE_XSTATE_INSPECT,
    minBalanceLamports:
      values.BRIDGE_MIN_BALANCE_LAMPORTS ??
      defaultMinBalanceLamports(
        values.BRIDGE_POLL_INTERVAL_SECS,
        values.BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS,
        Math.max(values.BRIDGE_SOURCE_TIP_LAMPORTS, values.BRIDGE_TARGET_TIP_LAMPORTS),
      ),
    onForeignSigner: values.BRIDGE_ON_FOREIGN_SIGNER,
    handoffMs: values.BRIDGE_HANDOFF_SECS,
    dryRun: values.BRIDGE_DRY_RUN,
    transferWaitAlertMs: values.BRIDGE_TRANSFER_WAIT_ALERT_SECS,
    priorityFee: { minMicroLamports: values.BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS, maxMicroLamports: values.BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS },
    nonceAccounts: values.BRIDGE_NONCE_ACCOUNTS,
    sendExtensions: toSendExtensions(values),
    watchdog: toWatchdog(flowLimits, values),
  };
}

/** A misspelt variable silently keeps its default: name every BRIDGE_* variable we do not read. */
function unknownVariableWarnings(env: Env): string[] {
  const known = new Set<string>(CONFIG_VARIABLES);
  return Object.keys(env)
    .filter((name) => name.startsWith('BRIDGE_') && !known.has(name) && !name.startsWith(FLOW_LIMIT_PREFIX))
    .sort()
    .map((name) => `${name}: not a variable this server reads (misspelt?); it is ignored`);
}
