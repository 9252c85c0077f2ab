import type { Keypair } from '@solana/web3.js';
import type { World } from '../../devnet/index.js';
import { assembleCrank } from '../../src/assemble-crank.js';
import { createLogger } from '../../src/log/logger.js';
import type { CrankService } from '../../src/machines/crank-service.js';
import type { CrankReport } from '../../src/machines/crank-types.js';
import type { CrankHealth } from '../../src/machines/health.js';
import type { Metrics } from '../../src/metrics/metrics.js';
import type { RpcFetch } from '../../src/chain/rpc/rpc-fetch.js';
import { authorityParts } from './clients.js';

/**
 * An honest authority: the crank the server runs (assembleCrank: the XState machine, its
 * planners and guards, over the real chain client) on the default configuration, with the
 * property runs' fast confirmation timing. Cycles run only when a command asks for one: the poll
 * interval is an hour, so no timer starts a cycle behind the model's back.
 */

const POLL_INTERVAL_MS = 3_600_000;
const MAX_ATTEMPTS = 3;
const RETRY_BACKOFF_MS = 2;
/** A cycle against the local devnet takes milliseconds; this only bounds a hung one. */
const CYCLE_TIMEOUT_MS = 20_000;
const KEPT_LOG_LINES = 12;

export class HonestCrank {
  readonly authority: string;
  /** BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS of its configuration. */
  readonly priorityFeeCap: number;
  /** Signatures the crank's attempt log lines report as landed: what /health's total counts. */
  readonly reportedLanded = new Set<string>();
  /** Signatures whose outcome the crank declared unknown (it gave up waiting for a confirmation). */
  private readonly declaredUnknownVersions = new Set<string>();
  /** Each re-priced version's first version (the crank's log line when it signs one): the versions are one transaction. */
  private readonly firstVersion = new Map<string, string>();
  /** Of those, the ones a later call found landed with an error (resolved, so no longer unknown). */
  readonly settledWithError = new Set<string>();
  /** Voids the crank signed (docs/chain-client.md, "Bounded in flight"): its own, never an action's transaction. */
  readonly voids = new Set<string>();
  /** Every second signer any life of this crank reported (its error line): signature, chain, whether it halted. */
  readonly foreignReports: Array<{ chain: string; signature: string; halted: boolean }> = [];
  /** Sent by an earlier life of this authority's server and not landed when it restarted: the new life may never count them. */
  readonly leftInFlight = new Set<string>();
  /** What /health's total said when each earlier life stopped: a new process counts from 0. */
  private earlierLivesTotal = 0;
  private service: CrankService;
  private readonly assemble: () => CrankService;
  private cyclesStarted = 0;
  private cyclesFinished = 0;
  private readonly problems: string[] = [];

  constructor(
    /** The authority's slot in the trackers (it owns bit `slot` of every vote mask). */
    readonly slot: number,
    world: World,
    keypair: Keypair,
    metrics: Metrics,
    /** Each chain's second endpoint. */
    fallbackUrls: Record<'source' | 'target', string>,
    /** How it reaches its chains: through the lies a fallback tells (liars.ts). */
    fetch: RpcFetch,
  ) {
    this.authority = keypair.publicKey.toBase58();
    const logger = createLogger({ level: 'debug', destination: { write: (line: string) => this.onLogLine(line) } });
    const config = {
      pollIntervalMs: POLL_INTERVAL_MS,
      maxAttempts: MAX_ATTEMPTS,
      retryBackoffMs: RETRY_BACKOFF_MS,
      sourceRpcFallbackUrls: [fallbackUrls.source],
      targetRpcFallbackUrls: [fallbackUrls.target],
      // A false second signer must show: it halts (invariant 12) rather than only counting a metric.
      onForeignSigner: 'halt' as const,
    };
    const parts = () => authorityParts(world, slot, keypair, metrics, { config, logger, fetch });
    this.priorityFeeCap = parts().config.priorityFee.maxMicroLamports;
    this.assemble = () => assembleCrank(parts());
    this.service = this.assemble();
  }

  health(): CrankHealth {
    return this.service.health();
  }

  /**
   * The crank declared this transaction's outcome unknown: it named this version or another
   * version of the same transaction (one signed against the same nonce value at a higher price).
   */
  declaredUnknown(signature: string): boolean {
    return this.declaredUnknownVersions.has(this.firstOf(signature));
  }

  /** Transactions this authority's server lives have counted as landed (/health's total, summed over the lives). */
  totalSubmitted(): number {
    return this.earlierLivesTotal + this.service.health().total_actions_submitted;
  }

  /**
   * The server stops and a new process starts over the same key, chains and configuration, with
   * nothing of the old one's memory; `inFlight` is what the old one sent that has not landed.
   * The new crank starts with a cycle of its own, as the server does.
   */
  async restart(inFlight: readonly string[]): Promise<void> {
    const total = this.service.health().total_actions_submitted;
    await this.stop();
    this.earlierLivesTotal += total;
    for (const signature of inFlight) this.leftInFlight.add(signature);
    this.cyclesStarted = this.cyclesFinished;
    this.service = this.assemble();
    await this.idle();
  }

  /** One crank cycle (POST /crank/once), then waits until the crank is idle again. */
  async cycle(): Promise<CrankReport> {
    const report = await withTimeout(this.service.runOnce(), CYCLE_TIMEOUT_MS, `crank ${this.slot} cycle`);
    await this.idle();
    return report;
  }

  /**
   * The crank starts with a cycle of its own, and a cycle that leaves a backlog is followed at
   * once by another (docs/crank.md, Timing). Commands run one at a time, so wait for both.
   */
  async idle(): Promise<void> {
    const deadline = Date.now() + CYCLE_TIMEOUT_MS;
    // A backlog cycle is armed as a 0 ms timer when the previous one ends: let it start first.
    await new Promise((resolve) => setTimeout(resolve, 0));
    while (this.cyclesStarted > this.cyclesFinished) {
      if (Date.now() > deadline) throw new Error(`crank ${this.slot} did not become idle within ${CYCLE_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  /** The crank's latest warnings and errors, for a counterexample's explanation. */
  recentProblems(): string[] {
    return [...this.problems];
  }

  async stop(): Promise<void> {
    await this.service.stop(CYCLE_TIMEOUT_MS);
  }

  private onLogLine(line: string): void {
    if (line.includes('"outcome":"')) this.onAttemptLine(JSON.parse(line) as Record<string, unknown>);
    if (line.includes(RESIGNED)) {
      const { signature, replaces } = JSON.parse(line) as Record<string, unknown>;
      this.firstVersion.set(String(signature), this.firstOf(String(replaces)));
    }
    if (line.includes(SETTLED_WITH_ERROR)) this.settledWithError.add(String((JSON.parse(line) as Record<string, unknown>)['signature']));
    if (line.includes(VOIDED)) this.voids.add(String((JSON.parse(line) as Record<string, unknown>)['void']));
    if (line.includes(FOREIGN_SIGNER)) {
      const { chain, signature, halted } = JSON.parse(line) as Record<string, unknown>;
      this.foreignReports.push({ chain: String(chain), signature: String(signature), halted: halted === true });
    }
    if (line.includes('"msg":"crank cycle started"')) this.cyclesStarted += 1;
    if (line.includes('"msg":"crank cycle finished"')) this.cyclesFinished += 1;
    if (line.includes('"level":"warn"') || line.includes('"level":"error"')) {
      this.problems.push(line.trim());
      if (this.problems.length > KEPT_LOG_LINES) this.problems.shift();
    }
  }

  /** One line per action attempt (docs/crank.md, Logs): its landed signatures and its error. */
  private onAttemptLine(record: Record<string, unknown>): void {
    const { signatures, err } = record;
    if (Array.isArray(signatures)) for (const signature of signatures) this.reportedLanded.add(String(signature));
    // `err` is always an object on a log line (docs/http-api.md, "Logs"): its text is its message.
    const message = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
    if (typeof message !== 'string') return;
    for (const [, signature] of message.matchAll(UNCONFIRMED)) this.declaredUnknownVersions.add(this.firstOf(signature!));
  }

  private firstOf(signature: string): string {
    return this.firstVersion.get(signature) ?? signature;
  }
}

/** The chain client's log line when it signs a higher-priced version against the same nonce value (nonce-lifetime.ts). */
const RESIGNED = '"msg":"not landed yet: signed again one escalation step higher against the same nonce value"';

/** The crank's error line for each transaction of its key it did not sign (crank-telemetry.ts). */
const FOREIGN_SIGNER = '"msg":"crank: a transaction signed with this authority\'s key was not signed by this server';

/** The chain client's log line when it voids a transaction it no longer wants (nonce-lifetime.ts). */
const VOIDED = '"msg":"a transaction the crank no longer wants is voided';

/** The chain client's log line when a pending transaction turns out to have landed with an error (transaction-sender.ts). */
const SETTLED_WITH_ERROR = '"msg":"an earlier transaction of this action landed with an error"';

/** The chain client's message for a transaction it stopped waiting for (transaction-sender.ts). */
const UNCONFIRMED = /transaction ([1-9A-HJ-NP-Za-km-z]+) not confirmed within/g;

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
