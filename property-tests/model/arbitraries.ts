import fc from 'fast-check';
import { RPC_TIMEOUT_MS } from '../system/clients.js';
import { FAULT_METHODS, type FaultSpec } from '../system/faults.js';
import { LIES } from '../system/liars.js';
import { PAIR_KINDS } from '../system/participants.js';
import type { PropertyProfile } from '../support/profile.js';
import {
  ByzantineCommand,
  ClaimCommand,
  CrankCycleCommand,
  DepositCommand,
  FaultOnCommand,
  FaultsOffCommand,
  HiddenSurgeCommand,
  QuiesceCommand,
  ResetPendingCommand,
  RestartCommand,
  RestartInFlightCommand,
  SetTokenPairCommand,
  TimePassesCommand,
} from './commands.js';
import type { BridgeModel, PropertyRun } from './model.js';

/**
 * Generators of the commands. Weights keep a sequence productive: cranks run often enough that
 * transfers make progress between the disturbances.
 */

const chain = fc.constantFrom('source' as const, 'target' as const);
const LARGE = 1_000_000_000_000_000n;

const deposit = fc
  .record({
    kind: fc.constantFrom(...PAIR_KINDS),
    // Across the low-limit (1,000) and low-vault (500) pairs: full, partial and rejected.
    amount: fc.bigInt(1n, 2_000n),
    recipient: fc.uint8Array({ minLength: 32, maxLength: 32 }),
    depositor: fc.nat(1),
  })
  .map(({ kind, amount, recipient, depositor }) => new DepositCommand(kind, amount, recipient, depositor));

const crankCycle = fc.nat(15).map((crank) => new CrankCycleCommand(crank));

const restart = fc.nat(15).map((crank) => new RestartCommand(crank));

/** What keeps a restarted server's transactions in flight: a delay, a floor above the cap (100,000), lost answers (a gateway's 504). */
const hold = fc.oneof(
  fc.record({ kind: fc.constant('inFlight' as const), slots: fc.constantFrom(2, 20) }),
  fc.constant({ kind: 'hiddenSurge' as const, priceFloor: 150_000 }),
  fc.record({ kind: fc.constant('loseResponses' as const), count: fc.integer({ min: 1, max: 3 }), mode: fc.constant('http504' as const) }),
);

const restartInFlight = fc
  .record({ crank: fc.nat(15), chain, hold })
  .map(({ crank, chain: side, hold: spec }) => new RestartInFlightCommand(crank, side, spec));

// Under the first escalation step (cap/4 at the default cap of 100,000), under the cap, above it.
const surgeFloor = fc.constantFrom(20_000, 60_000, 150_000);

const hiddenSurge = fc
  .record({ chain, priceFloor: surgeFloor, crank: fc.nat(15) })
  .map(({ chain: side, priceFloor, crank }) => new HiddenSurgeCommand(side, priceFloor, crank));

const claim = fc.nat(15).map((pick) => new ClaimCommand(pick));

const byzantine = fc
  .record({
    authority: fc.nat(3),
    chain,
    lies: fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }),
    flavor: fc.nat(5),
  })
  .map(({ authority, ...action }) => new ByzantineCommand(authority, action));

const setTokenPair = fc
  .record({
    kind: fc.constantFrom(...PAIR_KINDS),
    frozen: fc.boolean(),
    limitRemaining: fc.constantFrom(0n, 700n, LARGE),
    vaultBalance: fc.constantFrom(0n, 400n, LARGE),
  })
  .map(({ kind, ...settings }) => new SetTokenPairCommand(kind, settings));

const resetPending = fc.constant(null).map(() => new ResetPendingCommand());

const quiesce = fc.constant(null).map(() => new QuiesceCommand());

function faultSpec(profile: PropertyProfile): fc.Arbitrary<FaultSpec> {
  const method = fc.constantFrom(...FAULT_METHODS);
  // A latency above the RPC timeout makes calls time out (and sends land after the client gave up).
  // Each such call costs a whole timeout, so only the long profile draws it.
  const latencies = profile === 'long' ? [5, 25, RPC_TIMEOUT_MS + 100] : [5, 25];
  return fc.oneof(
    fc.record({ kind: fc.constantFrom('http500' as const, 'http429' as const, 'rpcErrors' as const), method, count: fc.integer({ min: 1, max: 4 }) }),
    fc.record({
      kind: fc.constant('errorRate' as const),
      method,
      rate: fc.constantFrom(0.2, 0.5),
      errorKind: fc.constantFrom('rpc' as const, 'http500' as const, 'http429' as const),
      seed: fc.nat(1_000),
    }),
    fc.record({ kind: fc.constant('latency' as const), method, ms: fc.constantFrom(...latencies) }),
    fc.record({
      kind: fc.constant('loseResponses' as const),
      count: fc.integer({ min: 1, max: 3 }),
      mode: fc.constantFrom('http500' as const, 'http504' as const, 'destroy' as const),
    }),
    fc.record({ kind: fc.constant('dropTransactions' as const), count: fc.constantFrom(1, 2, 3, 1_000) }),
    // Slots pass only with landed transactions and timePasses: 2 lands within the same cycle's
    // traffic, 20 after a timePasses or the liveness drain's traffic.
    fc.record({ kind: fc.constant('inFlight' as const), slots: fc.constantFrom(2, 20) }),
    // A few blocks behind, or a whole blockhash lifetime.
    fc.record({ kind: fc.constant('lagging' as const), slots: fc.constantFrom(5, 150) }),
  );
}

/**
 * One lying endpoint, the primary or the fallback (issue 39): old state (a backend 2 or 3 slots behind on half the answers),
 * forged history entries of an honest key, inflated slots, forged nonce values, an old genuine
 * transaction of the key re-listed (system/liars.ts).
 */
const node = fc.constantFrom('primary' as const, 'fallback' as const);
const lyingEndpoint: fc.Arbitrary<FaultSpec> = fc.oneof(
  fc.record({ kind: fc.constant('oldState' as const), slots: fc.constantFrom(2, 3), node }),
  fc.record({ kind: fc.constant('forgedHistory' as const), crank: fc.nat(15), transactions: fc.constantFrom(1, 3), node }),
  fc.record({ kind: fc.constant('lie' as const), lie: fc.constantFrom(...LIES), node }),
);

// Drawn apart from the other faults, as often, so that a fast run meets every lie.
const lyingEndpointOn = fc.record({ chain, spec: lyingEndpoint }).map(({ chain: side, spec }) => new FaultOnCommand(side, spec));

const faultsOff = chain.map((side) => new FaultsOffCommand(side));

// Past 150 slots every blockhash signed before has expired.
const timePasses = fc.record({ chain, slots: fc.constantFrom(1, 20, 151) }).map(({ chain: side, slots }) => new TimePassesCommand(side, slots));

export function bridgeCommands(profile: PropertyProfile): fc.Arbitrary<fc.AsyncCommand<BridgeModel, PropertyRun>> {
  const faultOn = fc.record({ chain, spec: faultSpec(profile) }).map(({ chain: side, spec }) => new FaultOnCommand(side, spec));
  // Cross shrinking lets any command shrink into the first one: the liveness drain (see QuiesceCommand).
  return fc.oneof(
    { withCrossShrink: true },
    { arbitrary: quiesce, weight: 1 },
    { arbitrary: deposit, weight: 4 },
    { arbitrary: crankCycle, weight: 6 },
    { arbitrary: restart, weight: 1 },
    { arbitrary: restartInFlight, weight: 2 },
    { arbitrary: hiddenSurge, weight: 2 },
    { arbitrary: claim, weight: 2 },
    { arbitrary: byzantine, weight: 3 },
    { arbitrary: setTokenPair, weight: 1 },
    { arbitrary: resetPending, weight: 1 },
    { arbitrary: faultOn, weight: 2 },
    { arbitrary: lyingEndpointOn, weight: 2 },
    { arbitrary: faultsOff, weight: 2 },
    { arbitrary: timePasses, weight: 1 },
  );
}
