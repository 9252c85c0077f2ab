import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import type { AuthoritySigner } from './signer/authority-signer.js';
import { endpointLabels } from './chain/rpc/endpoint-choice.js';
import { parseConfig, type Config, type CrankConfig } from './config/config.js';
import { RUNTIME_VARIABLES } from './config/variable-sets.js';
import { BridgeError, describeError, isBridgeError } from './errors.js';
import { buildApp } from './http/app.js';
import { crankAfterListen } from './lifecycle/crank-after-listen.js';
import { installShutdown } from './lifecycle/shutdown.js';
import { createLogger, type Logger } from './log/logger.js';
import type { CrankService } from './machines/crank-service.js';
import { publishHealthStatusAtScrape } from './machines/crank-telemetry.js';
import { createDisabledCrank } from './machines/disabled-crank.js';
import { createDisabledTransferQueries, type TransferQueries } from './transfers/transfer-queries.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { boundText, escapeUnsafeCharacters } from './text.js';

/**
 * The process: configuration from the environment, then logger, metrics, HTTP app, listen,
 * and only then the crank (a port in use exits before any cycle), graceful shutdown. Everything
 * with behaviour lives in the modules wired here.
 * Configuration problems print one line each on stderr and exit 1 before anything listens; so
 * does a bind address that cannot be bound.
 */

interface Startup {
  config: Config;
  /** Opened only when runtime configuration is present; never logged. */
  authority: AuthoritySigner | undefined;
  warnings: string[];
}

async function main(): Promise<void> {
  const startup = await readStartup(process.env);
  if (startup === undefined) {
    process.exitCode = 1;
    return;
  }
  const { config, authority, warnings } = startup;
  const logger = createLogger({ level: config.logLevel });
  for (const warning of warnings) logger.warn(warning);
  const metrics = createMetrics(new Registry());
  const configured = config.crank !== undefined && authority !== undefined ? { crank: config.crank, authority } : undefined;
  // Loaded before the port is bound, started after: a port in use runs no cycle and signs nothing.
  const startCrank = configured ? await configuredCrankStarter(configured.crank, configured.authority, logger, metrics) : createDisabledCrank;
  const crank = crankAfterListen(createDisabledCrank());
  publishHealthStatusAtScrape(() => crank.service.status(), metrics);
  const transfers = configured ? await configuredTransferQueries(configured.crank, metrics) : createDisabledTransferQueries();
  const app = buildApp({
    crank: crank.service,
    transfers,
    metrics,
    logger,
    auth: config.adminAuth,
    hosts: { bindHost: config.bind.host, allowedHosts: config.allowedHosts },
    maxConnectionsPerAddress: config.maxConnectionsPerAddress,
    onKill: () => shutdown.begin(),
  });
  const shutdown = installShutdown({ logger, deadlineMs: config.shutdownTimeoutMs, server: app, crank: crank.service });
  try {
    await app.listen({ host: config.bind.host, port: config.bind.port });
  } catch (err) {
    process.stderr.write(`${listenProblem(process.env, config.bind, err)}\n`);
    process.exit(1);
  }
  crank.begin(startCrank);
  logStarted(logger, config, app.server.address() as AddressInfo, authority);
}

/** At warn, not info: a server without its crank answers /health ok and signs nothing. */
const CRANK_DISABLED_LINE =
  `the crank is disabled: none of ${RUNTIME_VARIABLES.join(', ')} is set, so this server signs nothing and /health says ok; ` +
  'set them, or BRIDGE_REQUIRE_CRANK=true to make this a startup error where the crank must run';

/** The configuration and, with runtime configuration, the authority keypair; undefined after printing problems. */
async function readStartup(env: NodeJS.ProcessEnv): Promise<Startup | undefined> {
  try {
    const { config, warnings } = parseConfig(env);
    if (config.crank === undefined) return { config, authority: undefined, warnings: [...warnings, CRANK_DISABLED_LINE] };
    // Loaded on demand: a server without runtime configuration never loads the Solana stack.
    const { loadAuthoritySigner } = await import('./signer/open-signer.js');
    const loaded = await loadAuthoritySigner(config.crank.authorityKeypair, env);
    // Only now is the authority known: a tip account must be none of its accounts nor the bridge's.
    const { tipAccountProblems } = await import('./chain/client/budget/tip.js');
    const tipProblems = tipAccountProblems(config.crank, loaded.signer.publicKey);
    if (tipProblems.length > 0) throw new BridgeError('CONFIG__INVALID', { problems: tipProblems });
    return { config, authority: loaded.signer, warnings: [...warnings, ...loaded.warnings] };
  } catch (err) {
    if (!isBridgeError(err, 'CONFIG__INVALID')) throw err;
    // A problem may quote what the operator or a key service gave: no control character reaches the terminal.
    process.stderr.write(`${escapeUnsafeCharacters(err.context.problems.join('\n'))}\n`);
    return undefined;
  }
}

/** Loaded on demand: a server without runtime configuration never loads the Solana stack. */
async function configuredCrankStarter(config: CrankConfig, signer: AuthoritySigner, logger: Logger, metrics: Metrics): Promise<() => CrankService> {
  const { assembleCrank } = await import('./assemble-crank.js');
  return () => assembleCrank({ config, signer, logger, metrics });
}

const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the address is already in use (EADDRINUSE): stop what holds it or choose another port',
  EACCES: 'permission denied (EACCES): ports below 1024 need privileges; choose a port from 1024 up',
  EADDRNOTAVAIL: 'no interface of this host has that address (EADDRNOTAVAIL): bind 0.0.0.0, [::] or an address of this host',
};

/**
 * One stderr line for a port that cannot be bound, naming the variable that chose it
 * (docs/configuration.md: one line per problem, starting with the variable, no stack trace).
 */
function listenProblem(env: NodeJS.ProcessEnv, bind: Config['bind'], err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const why = (code === undefined ? undefined : LISTEN_FAILURES[code]) ?? boundText(describeError(err));
  const address = `${bind.host.includes(':') ? `[${bind.host}]` : bind.host}:${bind.port}`;
  if (isSet(env.BRIDGE_BIND_ADDRESS)) return `BRIDGE_BIND_ADDRESS: cannot listen on ${address}: ${why}`;
  if (isSet(env.PORT)) return `PORT: cannot listen on ${address} (BRIDGE_BIND_ADDRESS unset): ${why}`;
  return `BRIDGE_BIND_ADDRESS: cannot listen on ${address} (the default; neither BRIDGE_BIND_ADDRESS nor PORT is set): ${why}`;
}

// An empty value counts as unset, as parseConfig reads it.
function isSet(value: string | undefined): boolean {
  return value !== undefined && value !== '';
}

/** GET /transfers: read-only reads of both trackers, without the key (the routes share their answers between requests). */
async function configuredTransferQueries(crank: CrankConfig, metrics: Metrics): Promise<TransferQueries> {
  const [{ createOperatorReads }, { endpointsOptions }, { createTransferQueries }] = await Promise.all([
    import('./chain/client/operator-chains.js'),
    import('./chain/client/chain-endpoints.js'),
    import('./transfers/transfer-queries.js'),
  ]);
  return createTransferQueries(createOperatorReads(endpointsOptions(crank, metrics)).readRange);
}

/**
 * One line an operator can check the deployment against. RPC URLs are cut to their origin
 * (primary first, then the fallbacks): paths and queries often hold API keys.
 */
function logStarted(logger: Logger, config: Config, address: AddressInfo, authority: AuthoritySigner | undefined): void {
  const { crank } = config;
  logger.info(
    {
      host: address.address,
      port: address.port,
      adminAuth: config.adminAuth === undefined ? 'none (ingress restriction)' : 'basic',
      allowedHosts: config.allowedHosts,
      maxConnectionsPerAddress: config.maxConnectionsPerAddress,
      crank:
        crank === undefined
          ? { enabled: false }
          : {
              enabled: true,
              authority: authority?.publicKey.toBase58(),
              signer: authority?.describe(),
              sourceChainId: crank.sourceChainId,
              targetChainId: crank.targetChainId,
              sourceRpc: endpointLabels([crank.sourceRpcUrl, ...crank.sourceRpcFallbackUrls]),
              targetRpc: endpointLabels([crank.targetRpcUrl, ...crank.targetRpcFallbackUrls]),
              rpcMaxSlotLag: crank.rpcMaxSlotLag,
              sourceProgramId: crank.sourceProgramId,
              targetProgramId: crank.targetProgramId,
              pollIntervalMs: crank.pollIntervalMs,
              maxAttempts: crank.maxAttempts,
              retryBackoffMs: crank.retryBackoffMs,
              rpcTimeoutMs: crank.rpcTimeoutMs,
              sourceReadCommitment: crank.sourceReadCommitment,
              minBalanceLamports: crank.minBalanceLamports,
              priorityFeeMinMicroLamports: crank.priorityFee.minMicroLamports,
              priorityFeeCapMicroLamports: crank.priorityFee.maxMicroLamports,
              // Paid on top of the priority fee, to one of the accounts per transaction: 0 and 0 without a tip.
              tipLamports: { source: crank.sendExtensions.source.tip?.lamports ?? 0, target: crank.sendExtensions.target.tip?.lamports ?? 0 },
              tipAccounts: {
                source: crank.sendExtensions.source.tip?.accounts.length ?? 0,
                target: crank.sendExtensions.target.tip?.accounts.length ?? 0,
              },
              onForeignSigner: crank.onForeignSigner,
              handoffMs: crank.handoffMs,
              dryRun: crank.dryRun,
              transferWaitAlertMs: crank.transferWaitAlertMs,
            },
    },
    'bridge server listening',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bridge server failed to start: ${describeError(err)}\n`);
  process.exit(1);
});
