import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AGAVE_COMMITMENT_LAGS, MAX_LAG_SLOTS, type CommitmentLags } from './bank/commitment-banks.js';
import { isComputeCostScale, MAX_COMPUTE_COST_SCALE } from './bank/compute-costs.js';

/**
 * Strict flag parsing for `npm run devnet` and `npm run demo`: unknown flags, missing values
 * and out-of-range numbers are usage errors that name the flag.
 */

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

function parseFlags<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    // node:util's messages already name the flag ("Unknown option '--prot'").
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

function integerFlag(value: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

// Micro-lamports per compute unit: 1 lamport per CU, 200,000 lamports for a default 200,000-CU limit.
const MAX_PRICE_FLOOR = 1_000_000;

function scaleFlag(value: string | undefined): number {
  if (value === undefined) return 1;
  const scale = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !isComputeCostScale(scale)) {
    throw new UsageError(`--compute-cost-scale must be a number above 0 and at most ${MAX_COMPUTE_COST_SCALE}, got ${JSON.stringify(value)}`);
  }
  return scale;
}

const LAG_USAGE = `  --confirmed-lag N     slots the confirmed bank trails the head (default ${AGAVE_COMMITMENT_LAGS.confirmedLagSlots}, 0 to --finalized-lag)
  --finalized-lag N     slots the finalized bank trails the head (default ${AGAVE_COMMITMENT_LAGS.finalizedLagSlots}, up to ${MAX_LAG_SLOTS}); 0 and 0: one
                        bank for every commitment, as the devnet was before it had banks`;

const LAG_FLAGS = { 'confirmed-lag': { type: 'string' }, 'finalized-lag': { type: 'string' } } as const;

/** The commitment banks' lags: Agave's by default; a slot timer is needed for any lag (nothing else moves the banks). */
function lagFlags(values: { 'confirmed-lag'?: string; 'finalized-lag'?: string }, slotIntervalMs: number): CommitmentLags {
  const finalizedLagSlots = integerFlag(values['finalized-lag'], 'finalized-lag', AGAVE_COMMITMENT_LAGS.finalizedLagSlots, 0, MAX_LAG_SLOTS);
  const confirmedLagSlots = integerFlag(
    values['confirmed-lag'],
    'confirmed-lag',
    Math.min(AGAVE_COMMITMENT_LAGS.confirmedLagSlots, finalizedLagSlots),
    0,
    finalizedLagSlots,
  );
  if (slotIntervalMs === 0 && finalizedLagSlots > 0) {
    throw new UsageError(
      '--slot-interval-ms 0 stops the slot timer, so no bank behind the head would ever move: add --confirmed-lag 0 --finalized-lag 0',
    );
  }
  return { confirmedLagSlots, finalizedLagSlots };
}

function urlFlag(value: string, flag: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
    throw new UsageError(`--${flag} must be an http(s) URL, got ${JSON.stringify(value)}`);
  return value;
}

/** Quotes a value for a POSIX shell only when it needs it. */
export function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Resolves on the first SIGINT or SIGTERM; the returned signal aborts at that moment. Later ones
 * are ignored rather than left to kill the process mid-shutdown: under `npm run`, a terminal's
 * Ctrl-C reaches this process twice (from the terminal, and forwarded by npm), and the shutdown
 * after the first is bounded anyway.
 */
export function shutdownSignal(): { signal: AbortSignal; received: Promise<NodeJS.Signals> } {
  const controller = new AbortController();
  const received = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (name: NodeJS.Signals) => {
      if (controller.signal.aborted) return;
      controller.abort(new Error(`${name} received`));
      resolve(name);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  return { signal: controller.signal, received };
}

const DEFAULT_SOURCE_PORT = 8899;
const DEFAULT_TARGET_PORT = 8999;
export const DEFAULT_FIRST_SERVER_PORT = 8081;
const DEFAULT_DIR = '.devnet';

export interface DevnetFlags {
  sourcePort: number;
  targetPort: number;
  authorities: number;
  threshold: number;
  capacity: number;
  dir: string;
  traffic: boolean;
  slotIntervalMs: number;
  /** The bridge program's compute costs times this on both chains. */
  computeCostScale: number;
  /** Congestion on both chains once the bridge is created: micro-lamports per CU a transaction must bid to land (0: none). */
  priceFloor: number;
  /** Percent of sendTransaction the plain ports forward once the bridge exists; below 100 each chain gets a "staked" second port that forwards all. */
  forwardPercent: number;
  /** How far the confirmed and finalized banks trail the head. */
  commitmentLags: CommitmentLags;
  /** Percent of the slots holding a transaction that start a minority fork, once the bridge exists. */
  forkPercent: number;
  /** A running devnet node's JSON-RPC URL: upgrade the bridge program there (devnet_upgradeProgram), print the deployment and exit. */
  upgradeProgram?: string;
}

export const DEVNET_USAGE = `Usage: npm run devnet -- [options]

Starts a local source and target chain running the bridge program, creates the authorities and
the bridge on them, prints how to start a bridge server per authority, and runs until Ctrl-C.

  --source-port N       source chain JSON-RPC port (default ${DEFAULT_SOURCE_PORT}; 0 picks a free port)
  --target-port N       target chain JSON-RPC port (default ${DEFAULT_TARGET_PORT}; 0 picks a free port)
  --authorities N       number of authorities, 1 to 16 (default 3)
  --threshold N         votes needed, 1 to authorities (default: a majority)
  --capacity N          tracker capacity in entries (default 10000)
  --dir DIR             keypair files and world.json (default ${DEFAULT_DIR})
  --traffic             generate deposits and user claims
  --slot-interval-ms N  milliseconds per slot (default 400)
  --compute-cost-scale X  the bridge program's compute costs times X, above 0 to ${MAX_COMPUTE_COST_SCALE} (default 1;
                        devnet_setComputeCostScale changes it while the chains run)
  --price-floor N       congestion once the bridge exists: transactions bidding under N micro-lamports
                        per compute unit never land (0 to ${MAX_PRICE_FLOOR}, default 0: none)
  --forward-percent N   congested sending once the bridge exists: each chain's port forwards only N %
                        of sendTransaction to the leader (the rest never land), and a second port per
                        chain, "staked", forwards all (0 to 100, default 100: no second port)
${LAG_USAGE}
  --fork-percent N      once the bridge exists, N % of the slots holding a transaction start a minority
                        fork: seen at processed, abandoned before confirmed (0 to 100, default 0;
                        needs --confirmed-lag 1 or more)
  --upgrade-program URL  rehearsal: upgrade the bridge program of the running devnet node at URL
                        (devnet_upgradeProgram), print the new deployment and exit
  -h, --help            show this help
`;

export function parseDevnetFlags(argv: string[], maxCapacity: number): DevnetFlags | 'help' {
  const values = parseFlags(argv, {
    'source-port': { type: 'string' },
    'target-port': { type: 'string' },
    authorities: { type: 'string' },
    threshold: { type: 'string' },
    capacity: { type: 'string' },
    dir: { type: 'string' },
    traffic: { type: 'boolean' },
    'slot-interval-ms': { type: 'string' },
    'compute-cost-scale': { type: 'string' },
    'price-floor': { type: 'string' },
    'forward-percent': { type: 'string' },
    'fork-percent': { type: 'string' },
    ...LAG_FLAGS,
    'upgrade-program': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return 'help';
  const slotIntervalMs = integerFlag(values['slot-interval-ms'], 'slot-interval-ms', 400, 0, 60_000);
  const authorities = integerFlag(values.authorities, 'authorities', 3, 1, 16);
  const flags: DevnetFlags = {
    sourcePort: integerFlag(values['source-port'], 'source-port', DEFAULT_SOURCE_PORT, 0, 65_535),
    targetPort: integerFlag(values['target-port'], 'target-port', DEFAULT_TARGET_PORT, 0, 65_535),
    authorities,
    threshold: integerFlag(values.threshold, 'threshold', Math.floor(authorities / 2) + 1, 1, authorities),
    capacity: integerFlag(values.capacity, 'capacity', 10_000, 1, maxCapacity),
    dir: values.dir ?? DEFAULT_DIR,
    traffic: values.traffic === true,
    slotIntervalMs,
    computeCostScale: scaleFlag(values['compute-cost-scale']),
    priceFloor: integerFlag(values['price-floor'], 'price-floor', 0, 0, MAX_PRICE_FLOOR),
    forwardPercent: integerFlag(values['forward-percent'], 'forward-percent', 100, 0, 100),
    commitmentLags: lagFlags(values, slotIntervalMs),
    forkPercent: integerFlag(values['fork-percent'], 'fork-percent', 0, 0, 100),
    ...(values['upgrade-program'] === undefined ? {} : { upgradeProgram: urlFlag(values['upgrade-program'], 'upgrade-program') }),
  };
  if (flags.forkPercent > 0 && flags.commitmentLags.confirmedLagSlots === 0) {
    throw new UsageError(
      '--fork-percent needs --confirmed-lag 1 or more: with 0 every processed slot is confirmed at once and no fork can be abandoned',
    );
  }
  if (flags.dir.length === 0) throw new UsageError('--dir must not be empty');
  if (flags.sourcePort !== 0 && flags.sourcePort === flags.targetPort) {
    throw new UsageError(`--source-port and --target-port must differ (both ${flags.sourcePort})`);
  }
  return flags;
}

/** The demo's chains run at a mainnet slot time. */
const DEMO_SLOT_INTERVAL_MS = 400;

export interface DemoFlags {
  sourcePort: number;
  targetPort: number;
  serverPort: number;
  dir: string;
  computeCostScale: number;
  /** The price floor (micro-lamports per CU) on both chains once the servers start; 0: none. */
  congestion: number;
  /** How far the confirmed and finalized banks trail the head (400 ms slots). */
  commitmentLags: CommitmentLags;
  /** Percent of sendTransaction the plain ports forward; below 100 the servers send through a staked port per chain. */
  forwardPercent: number;
}

export const DEMO_USAGE = `Usage: npm run demo -- [options]

A whole local bridge: the devnet with traffic and three bridge servers (threshold 2) as child
processes. Prints their /health URLs and a status line of transfers by phase; Ctrl-C stops all.

  --server-port N   port of the first bridge server; the others use the next two (default ${DEFAULT_FIRST_SERVER_PORT})
  --source-port N   source chain JSON-RPC port (default ${DEFAULT_SOURCE_PORT})
  --target-port N   target chain JSON-RPC port (default ${DEFAULT_TARGET_PORT})
  --dir DIR         keypairs, world.json and server logs (default ${DEFAULT_DIR}/demo)
  --compute-cost-scale X  the bridge program's compute costs times X, above 0 to ${MAX_COMPUTE_COST_SCALE} (default 1)
  --congestion N    once the servers start, both chains refuse to land transactions bidding under
                    N micro-lamports per compute unit (0 to ${MAX_PRICE_FLOOR}; default 0: none; 20000 is busy)
  --forward-percent N  each chain's port forwards only N % of sendTransaction to the leader (the traffic's
                    users send there); the servers send through a second, staked port per chain that
                    forwards all (0 to 100; default 100: one port)
${LAG_USAGE}
  -h, --help        show this help
`;

export function parseDemoFlags(argv: string[]): DemoFlags | 'help' {
  const values = parseFlags(argv, {
    'server-port': { type: 'string' },
    'source-port': { type: 'string' },
    'target-port': { type: 'string' },
    dir: { type: 'string' },
    'compute-cost-scale': { type: 'string' },
    congestion: { type: 'string' },
    'forward-percent': { type: 'string' },
    ...LAG_FLAGS,
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return 'help';
  const flags: DemoFlags = {
    serverPort: integerFlag(values['server-port'], 'server-port', DEFAULT_FIRST_SERVER_PORT, 1, 65_533),
    sourcePort: integerFlag(values['source-port'], 'source-port', DEFAULT_SOURCE_PORT, 0, 65_535),
    targetPort: integerFlag(values['target-port'], 'target-port', DEFAULT_TARGET_PORT, 0, 65_535),
    dir: values.dir ?? `${DEFAULT_DIR}/demo`,
    computeCostScale: scaleFlag(values['compute-cost-scale']),
    congestion: integerFlag(values.congestion, 'congestion', 0, 0, MAX_PRICE_FLOOR),
    commitmentLags: lagFlags(values, DEMO_SLOT_INTERVAL_MS),
    forwardPercent: integerFlag(values['forward-percent'], 'forward-percent', 100, 0, 100),
  };
  if (flags.dir.length === 0) throw new UsageError('--dir must not be empty');
  return flags;
}
