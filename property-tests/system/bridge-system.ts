import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PublicKey, type Keypair } from '@solana/web3.js';
import { bootstrapWorld, startChainPair, type ChainPair, type CommitmentLags, type FaultSettings, type World } from '../../devnet/index.js';
import { readKeypairFile } from '../../devnet/world/keypair-files.js';
import type { Metrics } from '../../src/metrics/metrics.js';
import { ByzantineAuthority } from './byzantine.js';
import { HonestCrank } from './honest-crank.js';
import { Ledger, type ChainSide } from './ledger.js';
import type { TrackerAddresses } from './snapshot.js';
import { PAIR_KINDS, Participants } from './participants.js';
import { describeFault, faultSettings, type FaultSpec } from './faults.js';
import { LyingEndpoints, type Lie } from './liars.js';

/** The lying fallbacks of issue 39: the devnet's own lies and the fetch's. */
export type LyingFault = 'oldState' | 'forgedHistory' | Lie;
import { initNonces } from './clients.js';

/**
 * The real system one command sequence runs against: a fresh devnet chain pair with a
 * bootstrapped bridge, one real crank per honest authority, the byzantine authorities, users
 * and governance, and the ledger of everything the chains landed. Fresh per sequence (about
 * 100 ms), so sequences are independent and a shrunk counterexample replays on its own.
 */

export interface BridgeConfig {
  authorities: number;
  threshold: number;
  /** Slots of the dishonest authorities: fewer than `threshold`, and the rest reach it alone. */
  byzantine: number[];
  /**
   * Agave's banks: confirmed and finalized trail the head by these many slots, and both chains
   * make a block every SLOT_MS for the whole sequence (through the ledger), so that a
   * transaction reaches the confirmed bank and the cranks' reads at finalized see the chain as
   * it was 32 slots before. Without it, one bank, and blocks only with landings and commands.
   */
  commitmentLags?: CommitmentLags;
}

type Fallback = Pick<ChainPair['source'], 'url' | 'faults'>;

/**
 * Milliseconds per block while slots pass (withSlotsPassing): the at most 10 slots a nonce-mode
 * version waits before it is re-priced (the measured re-sign pace, 2 to 10 slots:
 * src/chain/client/submit/send/landing-record.ts) pass in 50 ms, so the three escalation steps
 * fit in the 300 ms a property crank waits for a confirmation (clients.ts).
 */
const SLOT_MS = 5;

/** Entries per tracker: far above what a sequence deposits. */
const CAPACITY = 256;

export class BridgeSystem {
  /** What each command did, in order: the story behind a counterexample. */
  readonly trace: string[] = [];
  readonly faultsActive: Record<ChainSide, boolean> = { source: false, target: false };
  /** Crank cycles that ended with last_error set. */
  failedCycles = 0;
  /** faultOn commands that turned on each lie of issue 39. */
  readonly liesOn: Record<LyingFault, number> = { oldState: 0, forgedHistory: 0, inflatedSlots: 0, forgedNonces: 0, replayedHistory: 0 };
  /** Restarts whose authority had sent transactions that had not landed. */
  restartsWithUnlanded = 0;
  /** The blocks both chains make on Agave's banks (config.commitmentLags). */
  private slotTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly config: BridgeConfig,
    readonly pair: ChainPair,
    /** Each chain's second endpoint, the honest cranks' fallback: where a lagging node's refusals come from. */
    private readonly fallbacks: Record<ChainSide, Fallback>,
    readonly world: World,
    readonly ledger: Ledger,
    readonly honest: HonestCrank[],
    readonly byzantine: ByzantineAuthority[],
    readonly participants: Participants,
    /** Every key that pays fees, for the fee accounting. */
    readonly feePayers: string[],
    private readonly dir: string,
    /** The fetch every honest crank reaches its chains through: the lies a fallback tells (liars.ts). */
    readonly liars: LyingEndpoints,
  ) {}

  /**
   * `metrics` is shared by every crank and client of a property run: createMetrics starts
   * prom-client's default collectors, which keep their registry alive for the life of the
   * process, and a long run starts thousands of cranks. No invariant reads a metric.
   */
  static async start(config: BridgeConfig, metrics: Metrics): Promise<BridgeSystem> {
    checkConfig(config);
    const lags = config.commitmentLags;
    const pair = await startChainPair({ slotIntervalMs: 0, ...(lags === undefined ? {} : { commitmentLags: lags }) });
    const fallbacks = { source: await pair.source.addEndpoint(), target: await pair.target.addEndpoint() };
    const dir = await mkdtemp(join(tmpdir(), 'bridge-property-'));
    // The setup's transactions wait for the confirmed bank: blocks pass while it runs, before the ledger watches.
    const setupSlots = lags === undefined ? undefined : setInterval(() => advanceBoth(pair, 1), SLOT_MS);
    try {
      const world = await bootstrapWorld(pair, { authorities: config.authorities, threshold: config.threshold, capacity: CAPACITY, dir });
      const keys = await Promise.all(world.authorities.map((authority) => keypairAt(authority.keypairPath)));
      const governance = await keypairAt(world.governance.keypairPath);
      const trackers: TrackerAddresses = {
        depositTracker: new PublicKey(world.source.depositTracker),
        withdrawTracker: new PublicKey(world.target.withdrawTracker),
      };
      // Honest authorities land in nonce mode, as after `npm run ops -- nonce init`; set up before the ledger watches.
      for (const [slot, keypair] of keys.entries()) if (!config.byzantine.includes(slot)) await initNonces(world, slot, keypair);
      const participants = new Participants(pair, world, trackers, governance);
      clearInterval(setupSlots);
      // The world, the nonce accounts and the airdrops reach every bank: the cranks read the source at finalized.
      if (lags !== undefined) advanceBoth(pair, lags.finalizedLagSlots);
      // Installed after every airdrop: from here on each block is a landed transaction or advanceSlots.
      const ledger = new Ledger(pair, trackers, new PublicKey(world.programId));
      const mints = PAIR_KINDS.map((kind) => participants.mints[kind].toBase58());
      const liars = new LyingEndpoints();
      const honest: HonestCrank[] = [];
      const byzantine: ByzantineAuthority[] = [];
      keys.forEach((keypair, slot) => {
        if (config.byzantine.includes(slot)) byzantine.push(new ByzantineAuthority(slot, world, keypair, ledger, mints, metrics));
        else honest.push(new HonestCrank(slot, world, keypair, metrics, { source: fallbacks.source.url, target: fallbacks.target.url }, liars.fetch));
      });
      const feePayers = [...keys.map((keypair) => keypair.publicKey.toBase58()), ...participants.keys()];
      const system = new BridgeSystem(config, pair, fallbacks, world, ledger, honest, byzantine, participants, feePayers, dir, liars);
      if (lags !== undefined)
        system.slotTimer = setInterval(() => {
          ledger.advanceSlots('source', 1);
          ledger.advanceSlots('target', 1);
        }, SLOT_MS);
      // Each crank starts with a cycle of its own; nothing is deposited yet, so it only reads.
      await Promise.all(honest.map((crank) => crank.idle()));
      return system;
    } catch (err) {
      clearInterval(setupSlots);
      await pair.close();
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  note(command: string, outcome: string): void {
    this.trace.push(`${command} -> ${outcome}`);
  }

  /**
   * Through the ledger: a price floor set or lifted can land what waited below it. Where a fault
   * goes: a lag on the fallback alone (the primary stays current, as in issue 31's mixed
   * answers); what a cluster does to a transaction (delays, drops, lost answers, a surge) on both
   * endpoints, or the cranks would route around it through the fallback; errors and latency on
   * the primary alone, one bad node: on both, each endpoint is taken out after 3 consecutive
   * failures and probed again only within 10 s, longer than the liveness drain lasts.
   */
  faultOn(chain: ChainSide, spec: FaultSpec): string {
    this.ledger.during(chain, 0, () => {
      if (spec.kind === 'lie') this.liars.set(this.endpointsOf(chain, spec)[0]!.url, spec.lie);
      else for (const endpoint of this.endpointsOf(chain, spec)) endpoint.faults.set(this.settingsOf(spec));
    });
    this.faultsActive[chain] = true;
    const lie = spec.kind === 'lie' ? spec.lie : spec.kind;
    if (lie in this.liesOn) this.liesOn[lie as LyingFault] += 1;
    return `${chain}: ${describeFault(spec)}`;
  }

  private settingsOf(spec: Exclude<FaultSpec, { kind: 'lie' }>): FaultSettings {
    if (spec.kind !== 'forgedHistory') return faultSettings(spec);
    return { forgedHistory: { address: this.honest[spec.crank % this.honest.length]!.authority, transactions: spec.transactions } };
  }

  /** The lies of issue 39 (old state, forged history, ./liars.ts) are one node's: the primary's or the fallback's. */
  private endpointsOf(chain: ChainSide, spec: FaultSpec): Fallback[] {
    switch (spec.kind) {
      case 'oldState':
      case 'forgedHistory':
      case 'lie':
        return [spec.node === 'primary' ? this.pair[chain] : this.fallbacks[chain]];
      case 'lagging':
        return [this.fallbacks[chain]];
      case 'inFlight':
      case 'dropTransactions':
      case 'loseResponses':
      case 'hiddenSurge':
        return [this.pair[chain], this.fallbacks[chain]];
      default:
        return [this.pair[chain]];
    }
  }

  faultsOff(chain: ChainSide): void {
    this.ledger.during(chain, 0, () => {
      this.liars.clear(this.fallbacks[chain].url);
      this.liars.clear(this.pair[chain].url);
      this.fallbacks[chain].faults.clear();
      this.pair[chain].faults.clear();
    });
    this.faultsActive[chain] = false;
  }

  /**
   * Runs `during` while `chain` makes a block every SLOT_MS, as a cluster does: with no timer
   * of their own the chains make blocks only for landings and timePasses, so without this no
   * slot would pass while a crank waits for a transaction held below a price floor.
   */
  async withSlotsPassing<T>(chain: ChainSide, during: () => Promise<T>): Promise<T> {
    const timer = setInterval(() => this.ledger.advanceSlots(chain, 1), SLOT_MS);
    try {
      return await during();
    } finally {
      clearInterval(timer);
    }
  }

  /** Honest authority k's server restarts: a new crank over the same key and chains; what its previous life sent may still be in flight. */
  async restart(k: number): Promise<string> {
    const crank = this.honest[k % this.honest.length]!;
    const inFlight = this.ledger.unlandedFrom(crank.authority);
    await crank.restart(inFlight);
    if (inFlight.length > 0) this.restartsWithUnlanded += 1;
    return `crank ${crank.slot} restarted with ${inFlight.length} transaction(s) sent and not landed`;
  }

  /**
   * On Agave's banks, until both chains' finalized banks hold what the head holds now: at most
   * the finalized lag's slots at SLOT_MS each (a slack of 4x for a loaded machine). At once with
   * one bank.
   */
  async finalityPassed(): Promise<void> {
    const lags = this.config.commitmentLags;
    if (lags === undefined) return;
    const heads = { source: this.pair.source.slot, target: this.pair.target.slot };
    const boundMs = 4 * lags.finalizedLagSlots * SLOT_MS + 1_000;
    const deadline = Date.now() + boundMs;
    const finalized = () => (['source', 'target'] as const).every((chain) => this.pair[chain].bank.slotOf('finalized') >= heads[chain]);
    while (!finalized()) {
      if (Date.now() > deadline)
        throw new Error(`the finalized banks did not reach slots ${heads.source} (source) and ${heads.target} (target) within ${boundMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, SLOT_MS));
    }
  }

  async close(): Promise<void> {
    clearInterval(this.slotTimer);
    await Promise.all(this.honest.map((crank) => crank.stop()));
    this.ledger.close();
    await this.pair.close();
    await rm(this.dir, { recursive: true, force: true });
  }
}

function checkConfig({ authorities, threshold, byzantine }: BridgeConfig): void {
  const honest = authorities - byzantine.length;
  if (byzantine.length >= threshold || honest < threshold || byzantine.some((slot) => slot < 0 || slot >= authorities)) {
    throw new Error(
      `bridge config ${authorities} authorities, threshold ${threshold}, byzantine ${byzantine.join(',')}: ` +
        'the properties need fewer byzantine authorities than the threshold and at least threshold honest ones',
    );
  }
}

function advanceBoth(pair: ChainPair, slots: number): void {
  pair.source.advanceSlots(slots);
  pair.target.advanceSlots(slots);
}

async function keypairAt(path: string): Promise<Keypair> {
  const keypair = await readKeypairFile(path);
  if (keypair === undefined) throw new Error(`bootstrapWorld wrote no keypair file at ${path}`);
  return keypair;
}
