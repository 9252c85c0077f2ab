import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  __unsafe_getAllOwnEventDescriptors as ownEventTypes,
  createActor,
  createEmptyActor,
  fromPromise,
  getStateNodes as activeStateNodes,
  type AnyActorLogic,
  type AnyActorScope,
  type AnyStateNode,
  type AnyTransitionDefinition,
  type InspectionEvent,
  type SnapshotFrom,
} from 'xstate';
import { adjacencyMapToArray, getAdjacencyMap, getShortestPaths, getStateNodes, type StatePath } from 'xstate/graph';
import type { AuthorityView } from '../../src/chain/port/bridge-chains.js';
import { chainsShortOfFees } from '../../src/machines/health.js';
import type { CycleRead, ActionReport, Submission } from '../../src/machines/crank-context.js';
import type { CrankSettings, ReadInput } from '../../src/machines/crank-context.js';
import type { CrankEvent } from '../../src/machines/crank-types.js';
import { crankMachine } from '../../src/machines/crank-machine.js';
import type { LeaseStepOutcome, LeaseWant } from '../../src/machines/lease.js';
import type { CyclePlan } from '../../src/machines/planning/cycle-plan.js';
import { MAX_TIMER_DELAY_MS } from '../../src/time.js';
import { NOT_WAITING } from './support/bridge-view.js';
import { programError, retryableSubmitError } from './support/scripted-chains.js';

/**
 * Path coverage (xstate/graph). The machine is traversed with every event it can meet (the
 * actors' outcomes included); every transition and state of its definition must be reached.
 * A set of generated paths covering them all is then replayed against the running actor, whose
 * state must follow the model at every step, and whose own microsteps must cover every
 * transition too. The coverage sets come from the machine definition, not from a list here.
 */

type Snapshot = SnapshotFrom<typeof crankMachine>;
type ModelEvent = CrankEvent;

const SETTINGS: CrankSettings = {
  // Three timer chunks, so that idle's re-arming transition is part of the model.
  pollIntervalMs: 2 * MAX_TIMER_DELAY_MS + 1000,
  maxAttempts: 2,
  retryBackoffMs: 100,
  batchLimit: 1,
  maxBacklogCycles: 1,
  onForeignSigner: 'continue',
  minBalanceLamports: 0,
  dryRun: false,
  handoffMs: 0,
};

function plan(items: number, pending: number): CyclePlan {
  const indices = Array.from({ length: items }, (_, index) => index);
  return {
    ackDeposit: { votes: indices.map((index) => ({ index, approve: true, amount: '5', recipient: 'R', sourceMint: 'M' })), pending },
    ackWithdraw: {
      votes: indices.map((index) => ({
        vote: { index, approve: true, result: { kind: 'Rejected' as const, reason: 'InternalError' as const } },
        destination: { status: 'Finalized' as const, createdTokenAccount: 'NotRequired' as const, result: { kind: 'Rejected' as const } },
      })),
      pending,
    },
    cleanup: { indices, pending, waits: [] },
  };
}

const PLANS = { nothing: plan(0, 0), work: plan(1, 1), backlog: plan(1, 3) };
const FUNDED: AuthorityView = { source: { balance: 1_000_000, transactions: [] }, target: { balance: 1_000_000, transactions: [] } };
const BROKE: AuthorityView = { source: { balance: 0, transactions: [] }, target: { balance: 0, transactions: [] } };
const FEES = { source: 5_000, target: 5_000 };
/** What the read actor answers: each plan with the fees paid, and work that cannot be paid for. */
const READS: CycleRead[] = [
  ...Object.values(PLANS).map((plan) => ({ plan, authority: FUNDED, fees: FEES, waiting: NOT_WAITING, readAtMs: 0, nonceSignal: false })),
  { plan: PLANS.work, authority: BROKE, fees: FEES, waiting: NOT_WAITING, readAtMs: 0, nonceSignal: false },
];
/** With the lease in use (a handoff): a read that finds it free, so that the leasing step runs, and what that step can find. */
const LEASE_FREE_READ: CycleRead = { ...READS[1]!, lease: { state: 'free', lamports: 0, slot: 1 } };
const LEASE_OUTCOMES: LeaseStepOutcome[] = [
  { kind: 'took', value: 'V', slot: 2, signature: 'sig' },
  { kind: 'not_taken', seen: { state: 'held', value: 'W', lamports: 0, slot: 2 }, why: 'taken first' },
];
const LANDED: ActionReport = { transactions: [{ signature: 'sig', indices: [0] }], completed: [0], alreadyDone: [] };
const FAILURES = [retryableSubmitError(), programError('NotAnAuthority')];

/** Everything that can happen to the machine: requests, and each actor's outcomes. */
const OUTCOMES = [
  { type: 'POLL' },
  { type: 'CRANK_ONCE', requestId: 'r1' },
  { type: 'STOP' },
  ...['read', 'reread'].flatMap((id) => READS.map((output) => ({ type: `xstate.done.actor.${id}`, actorId: id, output }))),
  ...['read', 'reread', 'submit'].flatMap((id) => FAILURES.map((error) => ({ type: `xstate.error.actor.${id}`, actorId: id, error }))),
  { type: 'xstate.done.actor.submit', actorId: 'submit', output: LANDED },
  { type: 'xstate.done.actor.read', actorId: 'read', output: LEASE_FREE_READ },
  ...LEASE_OUTCOMES.map((output) => ({ type: 'xstate.done.actor.lease', actorId: 'lease', output })),
  { type: 'xstate.error.actor.lease', actorId: 'lease', error: retryableSubmitError() },
] as unknown as ModelEvent[];

/** Timers firing: the delayed transitions of the current state. */
function modelEvents(snapshot: Snapshot): ModelEvent[] {
  const delayed = ownEventTypes(snapshot).filter((type) => type.startsWith('xstate.after.'));
  return [...OUTCOMES, ...delayed.map((type) => ({ type }) as unknown as ModelEvent)];
}

/** The facts the guards decide on, per state (timestamps and ids left out). */
function abstractState(snapshot: Snapshot): string {
  const { context, value } = snapshot;
  const inCycle = context.cycle !== null;
  const inAction = typeof value === 'object';
  const failing = /failed|retry-backoff/.test(JSON.stringify(value));
  const idle = value === 'idle';
  const planKind = context.plan === null ? null : `${context.plan.ackDeposit.votes.length}/${context.plan.ackDeposit.pending}`;
  const unpaid = chainsShortOfFees(context.health.fees).length > 0;
  return JSON.stringify({
    value,
    plan: inCycle ? planKind : undefined,
    unpaid: inCycle ? unpaid : undefined,
    attempt: inAction ? context.progress.attempt : undefined,
    retryable: failing ? context.progress.failure?.retryable : undefined,
    queued: context.queuedRequests.length > 0,
    stop: context.stopRequested,
    cycleFailed: inCycle ? context.cycle?.failed : undefined,
    streak: context.backlogStreak,
    waited: idle ? context.idleWaitedMs : undefined,
    drain: idle ? context.drainBacklog : undefined,
    lease:
      context.health.lease.status === 'off'
        ? undefined
        : { status: context.health.lease.status, want: context.health.lease.want?.kind, role: context.health.role.role },
  });
}

/** The model over one settings value (guards read settings: a backoff of 0 retries without a timer; dry run or not). */
const traversal = (input: CrankSettings) => ({
  input,
  events: modelEvents,
  filterEvents: (snapshot: Snapshot, event: ModelEvent) => snapshot.can(event),
  serializeState: abstractState,
  serializeEvent: (event: ModelEvent) =>
    JSON.stringify(event, (key, item: unknown) => (key === 'error' && item instanceof Error ? item.message : item)),
});

/** A transition's identity in any instance of the machine (provide() builds new state nodes). */
function transitionKey(transition: AnyTransitionDefinition): string {
  const { source, eventType } = transition;
  const siblings = eventType === '' ? (source.always ?? []) : (source.transitions.get(eventType) ?? []);
  return `${source.id} ${eventType === '' ? '(always)' : eventType} #${siblings.indexOf(transition)}`;
}

function definitionTransitions(): Set<string> {
  const nodes: AnyStateNode[] = [crankMachine.root, ...getStateNodes(crankMachine.root)];
  return new Set(nodes.flatMap((node) => [...[...node.transitions.values()].flat(), ...(node.always ?? [])].map(transitionKey)));
}

function definitionStates(): Set<string> {
  return new Set(getStateNodes(crankMachine.root).map((node) => node.id));
}

function statesOf(snapshot: { value: unknown }): string[] {
  const nodes = activeStateNodes(crankMachine.root, snapshot.value as Snapshot['value']);
  const ids = new Set<string>();
  for (const node of nodes) {
    for (let current: AnyStateNode | undefined = node; current && current !== crankMachine.root; current = current.parent) ids.add(current.id);
  }
  return [...ids];
}

interface Coverage {
  transitions: Set<string>;
  states: Set<string>;
}

function recordMicrostep(coverage: Coverage, event: InspectionEvent): void {
  if (event.type !== '@xstate.microstep' || event.actorRef.sessionId !== event.rootId) return;
  for (const transition of event._transitions) coverage.transitions.add(transitionKey(transition));
  for (const id of statesOf(event.snapshot as Snapshot)) coverage.states.add(id);
}

/** The transitions and states one model step goes through, computed without running anything. */
function modelStep(snapshot: Snapshot, event: ModelEvent): Coverage {
  const coverage: Coverage = { transitions: new Set(), states: new Set() };
  const scopeActor = createEmptyActor();
  scopeActor.system.inspect((inspected: InspectionEvent) => recordMicrostep(coverage, { ...inspected, rootId: inspected.actorRef.sessionId }));
  const scope = {
    self: scopeActor,
    logger: () => undefined,
    id: '',
    sessionId: scopeActor.sessionId,
    defer: () => undefined,
    system: scopeActor.system,
    stopChild: () => undefined,
    emit: () => undefined,
    actionExecutor: () => undefined,
  } as unknown as AnyActorScope;
  crankMachine.transition(snapshot, event, scope);
  return coverage;
}

interface Edge {
  settings: CrankSettings;
  path: StatePath<Snapshot, ModelEvent>;
  covers: Coverage;
}

/** Every edge of the traversal, each as the shortest path to its source plus the edge itself. */
function edges(settings: CrankSettings): Edge[] {
  const options = traversal(settings);
  const shortest = new Map(getShortestPaths(crankMachine, options).map((path) => [abstractState(path.state), path]));
  const adjacency = getAdjacencyMap<Snapshot, ModelEvent, CrankSettings>(crankMachine as AnyActorLogic, options);
  return adjacencyMapToArray(adjacency).map(({ state, event, nextState }) => {
    const toSource = shortest.get(abstractState(state))!;
    return {
      settings,
      path: { state: nextState, weight: toSource.weight + 1, steps: [...toSource.steps, { state: nextState, event }] },
      covers: modelStep(state, event),
    };
  });
}

/** Greedy: the shortest edges that together reach every transition and state they can. */
function coveringPaths(all: Edge[]): Edge[] {
  const chosen: Edge[] = [];
  const covered: Coverage = { transitions: new Set(), states: new Set() };
  const adds = (edge: Edge) =>
    [...edge.covers.transitions].filter((key) => !covered.transitions.has(key)).length +
    [...edge.covers.states].filter((id) => !covered.states.has(id)).length;
  for (const edge of [...all].sort((a, b) => a.path.weight - b.path.weight)) {
    if (adds(edge) === 0) continue;
    chosen.push(edge);
    for (const key of edge.covers.transitions) covered.transitions.add(key);
    for (const id of edge.covers.states) covered.states.add(id);
  }
  return chosen;
}

/** The machine's actors, answered by the replayed path instead of a chain. */
class ScriptedActors {
  private running: { src: string; resolve(value: unknown): void; reject(error: unknown): void } | undefined;

  readonly logic = {
    readAndPlan: fromPromise<CycleRead, ReadInput>(() => this.invoked('readAndPlan')),
    submitAction: fromPromise<ActionReport, Submission>(() => this.invoked('submitAction')),
    keepLease: fromPromise<LeaseStepOutcome, LeaseWant>(() => this.invoked('keepLease')),
  };

  answer(event: { type: string; output?: unknown; error?: unknown }): void {
    const running = this.running;
    const src = /\.(read|reread)$/.test(event.type) ? 'readAndPlan' : event.type.endsWith('.lease') ? 'keepLease' : 'submitAction';
    expect(running?.src, `${event.type} needs a running ${src}`).toBe(src);
    this.running = undefined;
    if (event.type.startsWith('xstate.done.')) running!.resolve(event.output);
    else running!.reject(event.error);
  }

  private invoked<T>(src: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.running = { src, resolve: resolve as (value: unknown) => void, reject };
    });
  }
}

/** One macrotask: every promise callback queued so far runs, no timer does. */
function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function replay({ path, settings }: Edge, coverage: Coverage): Promise<void> {
  const actors = new ScriptedActors();
  const actor = createActor(crankMachine.provide({ actors: actors.logic }), {
    input: settings,
    inspect: (event) => recordMicrostep(coverage, event),
  });
  actor.start();
  try {
    for (const [n, step] of path.steps.entries()) {
      const event = step.event as { type: string };
      if (n > 0) {
        if (event.type.startsWith('xstate.after.')) vi.advanceTimersToNextTimer();
        else if (event.type.startsWith('xstate.done.') || event.type.startsWith('xstate.error.')) actors.answer(event);
        else actor.send(step.event);
        await flush();
      }
      expect(abstractState(actor.getSnapshot()), `after step ${n} (${event.type})`).toBe(abstractState(step.state));
    }
  } finally {
    actor.stop();
    vi.clearAllTimers();
  }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('crank machine path coverage', () => {
  const all = [
    ...edges(SETTINGS),
    ...edges({ ...SETTINGS, retryBackoffMs: 0 }),
    ...edges({ ...SETTINGS, dryRun: true }),
    ...edges({ ...SETTINGS, handoffMs: 60_000 }),
  ];

  it('reaches every state and every transition of the definition in the model', () => {
    const reached: Coverage = { transitions: new Set(), states: new Set() };
    for (const edge of all) {
      for (const key of edge.covers.transitions) reached.transitions.add(key);
      for (const id of edge.covers.states) reached.states.add(id);
    }
    expect([...definitionTransitions()].filter((key) => !reached.transitions.has(key))).toEqual([]);
    expect([...definitionStates()].filter((id) => !reached.states.has(id))).toEqual([]);
  });

  it('runs a covering set of generated paths on the actor, which follows the model at every step', async () => {
    const exercised: Coverage = { transitions: new Set(), states: new Set() };
    const paths = coveringPaths(all);
    for (const edge of paths) await replay(edge, exercised);
    expect([...definitionTransitions()].filter((key) => !exercised.transitions.has(key))).toEqual([]);
    expect([...definitionStates()].filter((id) => !exercised.states.has(id))).toEqual([]);
  });
});
