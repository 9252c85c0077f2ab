import { describeError } from '../src/errors.js';
import { startChainPair } from './chain-pair.js';
import { congestSending } from './staked-paths.js';
import { DEFAULT_FIRST_SERVER_PORT, DEVNET_USAGE, UsageError, parseDevnetFlags, shellQuote, shutdownSignal, type DevnetFlags } from './cli-args.js';
import { maxTrackerCapacity } from '../src/chain/codec/layout.js';
import { upgradeProgramAt } from './rehearsal.js';
import { ONE_SERVER_PER_AUTHORITY, serverEnv } from './server-env.js';
import { startTraffic } from './traffic.js';
import { bootstrapWorld, worldFilePath, type World } from './world/bootstrap.js';

/**
 * `npm run devnet`: both chains, the bridge on them, the commands to start one bridge server
 * per authority; runs until SIGINT or SIGTERM, then closes and exits 0. Usage errors exit 2.
 */

const TRAFFIC_ERROR_INTERVAL_MS = 5_000;

async function main(argv: string[]): Promise<number> {
  let flags: DevnetFlags | 'help';
  try {
    // The DepositTracker's entries are the larger: its limit bounds both trackers.
    flags = parseDevnetFlags(argv, maxTrackerCapacity('DepositTracker'));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`devnet: ${err.message}\nRun with --help for the options.\n`);
    return 2;
  }
  if (flags === 'help') {
    process.stdout.write(DEVNET_USAGE);
    return 0;
  }
  if (flags.upgradeProgram !== undefined) return upgradeProgramAt(flags.upgradeProgram);
  return runDevnet(flags);
}

async function runDevnet(flags: DevnetFlags): Promise<number> {
  const shutdown = shutdownSignal();
  const pair = await startChainPair({
    sourcePort: flags.sourcePort,
    targetPort: flags.targetPort,
    slotIntervalMs: flags.slotIntervalMs,
    computeCostScale: flags.computeCostScale,
    commitmentLags: flags.commitmentLags,
    signal: shutdown.signal,
  }).catch((err: unknown) => {
    if (shutdown.signal.aborted) return undefined;
    throw err;
  });
  if (pair === undefined) return 0;
  try {
    const world = await bootstrapWorld(pair, { ...flags, signal: shutdown.signal });
    process.stdout.write(describeWorld(world, flags.commitmentLags));
    if (flags.priceFloor > 0) {
      for (const node of [pair.source, pair.target]) node.faults.set({ priceFloor: flags.priceFloor });
      process.stdout.write(`Congestion: transactions bidding under ${flags.priceFloor} micro-lamports per compute unit do not land.\n`);
    }
    if (flags.forwardPercent < 100) {
      const sendUrls = await congestSending(pair, flags.forwardPercent);
      process.stdout.write(
        [
          `Congested sending: each chain's port forwards ${flags.forwardPercent} % of sendTransaction; the staked ports forward all:`,
          `  ${Object.entries(sendUrls)
            .map(([name, url]) => `${name}=${url}`)
            .join(' ')}`,
          '',
        ].join('\n'),
      );
    }
    if (flags.forkPercent > 0) {
      for (const node of [pair.source, pair.target]) node.faults.set({ forkShare: flags.forkPercent / 100 });
      process.stdout.write(`Forks: ${flags.forkPercent} % of the slots holding a transaction start a minority fork, abandoned before confirmed.\n`);
    }
    const traffic = flags.traffic ? startTraffic(pair, world, { onError: throttled(TRAFFIC_ERROR_INTERVAL_MS) }) : undefined;
    if (traffic !== undefined) process.stdout.write('Traffic: deposits and claims are running.\n');
    process.stdout.write('Press Ctrl-C to stop.\n');
    await shutdown.received;
    await traffic?.stop();
  } catch (err) {
    if (!shutdown.signal.aborted) throw err;
  } finally {
    await pair.close();
  }
  process.stdout.write('devnet stopped\n');
  return 0;
}

function describeWorld(world: World, { confirmedLagSlots, finalizedLagSlots }: DevnetFlags['commitmentLags']): string {
  const lines = [
    `Commitments: confirmed ${confirmedLagSlots} and finalized ${finalizedLagSlots} slots behind the head (a request without a commitment reads finalized).`,
    `Source chain ${world.source.chainId}: ${world.source.rpcUrl}  (DepositTracker ${world.source.depositTracker})`,
    `Target chain ${world.target.chainId}: ${world.target.rpcUrl}  (WithdrawTracker ${world.target.withdrawTracker})`,
    `Program ${world.programId}; ${world.authorities.length} authorities, threshold ${world.threshold}; world: ${worldFilePath(world.dir)}`,
    '',
    'Start a bridge server per authority:',
    `  # ${ONE_SERVER_PER_AUTHORITY}`,
  ];
  world.authorities.forEach((authority, k) => {
    const env = serverEnv(world, k, DEFAULT_FIRST_SERVER_PORT + k);
    const assignments = Object.entries(env).map(([name, value]) => `${name}=${shellQuote(value)}`);
    lines.push(`  # authority ${k}: ${authority.publicKey}`, `  ${assignments.join(' ')} npm start`);
  });
  return `${lines.join('\n')}\n\n`;
}

/** Prints traffic failures at most once per interval, with a count of the ones not printed. */
function throttled(intervalMs: number): (err: unknown) => void {
  let lastPrinted = 0;
  let skipped = 0;
  return (err) => {
    const now = Date.now();
    if (now - lastPrinted < intervalMs) {
      skipped += 1;
      return;
    }
    const more = skipped > 0 ? ` (${skipped} more since the last report)` : '';
    process.stderr.write(`traffic: ${describeError(err)}${more}\n`);
    lastPrinted = now;
    skipped = 0;
  };
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`devnet: ${describeError(err)}\n`);
    process.exitCode = 1;
  },
);
