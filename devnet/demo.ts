import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeError } from '../src/errors.js';
import { startChainPair } from './chain-pair.js';
import { DEMO_USAGE, UsageError, parseDemoFlags, shutdownSignal, type DemoFlags } from './cli-args.js';
import { killServersNow, spawnServers, stopServers, type DemoServer } from './demo-servers.js';
import { congestSending } from './staked-paths.js';
import { formatSummary, summarizeTransfers } from './summary.js';
import { startTraffic, type Traffic } from './traffic.js';
import { bootstrapWorld, worldFilePath } from './world/bootstrap.js';

/**
 * `npm run demo`: the devnet with traffic plus three bridge servers (threshold 2), their /health
 * URLs, and a status line of transfers by phase every few seconds. SIGINT or SIGTERM stops the
 * servers (SIGTERM, bounded wait), the traffic and the chains, then exits 0.
 */

const AUTHORITIES = 3;
const THRESHOLD = 2;
const CAPACITY = 10_000;
const SUMMARY_INTERVAL_MS = 5_000;
const SERVER_STOP_DEADLINE_MS = 10_000;
// dist-devnet/devnet/demo.js -> dist/index.js: the server as `npm start` runs it.
const SERVER_ENTRY = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

async function main(argv: string[]): Promise<number> {
  let flags: DemoFlags | 'help';
  try {
    flags = parseDemoFlags(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`demo: ${err.message}\nRun with --help for the options.\n`);
    return 2;
  }
  if (flags === 'help') {
    process.stdout.write(DEMO_USAGE);
    return 0;
  }
  if (!existsSync(SERVER_ENTRY)) {
    process.stderr.write(`demo: the bridge server ${SERVER_ENTRY} is missing; build it first with npm run build\n`);
    return 1;
  }
  return runDemo(flags);
}

async function runDemo(flags: DemoFlags): Promise<number> {
  const shutdown = shutdownSignal();
  const pair = await startChainPair({
    sourcePort: flags.sourcePort,
    targetPort: flags.targetPort,
    computeCostScale: flags.computeCostScale,
    commitmentLags: flags.commitmentLags,
    signal: shutdown.signal,
  }).catch((err: unknown) => {
    if (shutdown.signal.aborted) return undefined;
    throw err;
  });
  if (pair === undefined) return 0;
  let servers: DemoServer[] = [];
  let traffic: Traffic | undefined;
  const killOnExit = () => killServersNow(servers);
  process.once('exit', killOnExit);
  try {
    const world = await bootstrapWorld(pair, {
      authorities: AUTHORITIES,
      threshold: THRESHOLD,
      capacity: CAPACITY,
      dir: flags.dir,
      signal: shutdown.signal,
    });
    // After the bootstrap, so the bridge is created; before the traffic, whose users bid the floor.
    for (const node of [pair.source, pair.target]) node.faults.set({ priceFloor: flags.congestion });
    // The servers send through the staked ports; the traffic's users through the plain ones.
    const sendUrls = flags.forwardPercent < 100 ? await congestSending(pair, flags.forwardPercent) : {};
    traffic = startTraffic(pair, world);
    servers = spawnServers(
      SERVER_ENTRY,
      world,
      flags.serverPort,
      (server, code) => {
        if (!shutdown.signal.aborted) process.stderr.write(`bridge server ${server.index} exited with code ${code}; see ${server.logPath}\n`);
      },
      sendUrls,
    );
    process.stdout.write(
      [
        ...(flags.congestion > 0
          ? [`Congestion: both chains land only transactions bidding at least ${flags.congestion} micro-lamports per compute unit`]
          : []),
        ...(flags.forwardPercent < 100
          ? [
              `Congested sending: each chain's port forwards ${flags.forwardPercent} % of sendTransaction; the servers send through staked ports that forward all`,
            ]
          : []),
        `Commitments: confirmed ${flags.commitmentLags.confirmedLagSlots} and finalized ${flags.commitmentLags.finalizedLagSlots} slots behind the head`,
        ...(flags.computeCostScale === 1 ? [] : [`Compute costs: the bridge program's times ${flags.computeCostScale}`]),
        `Source chain ${world.source.chainId}: ${world.source.rpcUrl}`,
        `Target chain ${world.target.chainId}: ${world.target.rpcUrl}`,
        `World: ${worldFilePath(world.dir)}`,
        ...servers.map((s) => `Bridge server ${s.index}: ${s.healthUrl}  (log: ${s.logPath})`),
        'Traffic is running; a status line follows every 5 s. Press Ctrl-C to stop.',
        '',
      ].join('\n'),
    );
    const status = setInterval(
      () => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${formatSummary(summarizeTransfers(pair, world))}\n`),
      SUMMARY_INTERVAL_MS,
    );
    status.unref();
    await shutdown.received;
    clearInterval(status);
    process.stdout.write('stopping: bridge servers, traffic, chains\n');
  } catch (err) {
    if (!shutdown.signal.aborted) throw err;
  } finally {
    await stopServers(servers, SERVER_STOP_DEADLINE_MS);
    await traffic?.stop();
    process.off('exit', killOnExit);
    await pair.close();
  }
  process.stdout.write('demo stopped\n');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`demo: ${describeError(err)}\n`);
    process.exitCode = 1;
  },
);
