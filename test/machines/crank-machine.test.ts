import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createActor } from 'xstate';
import { crankSettings } from '../../src/machines/crank-context.js';
import { crankActors } from '../../src/machines/crank-service.js';
import type { CrankEmitted } from '../../src/machines/crank-types.js';
import { crankMachine } from '../../src/machines/crank-machine.js';
import { crankMachineDefinition } from '../../src/machines/export.js';
import { bridgeView, deposits } from './support/bridge-view.js';
import { fails, retryableSubmitError, ScriptedChains } from './support/scripted-chains.js';
import { settle, TEST_CRANK_SETTINGS, useCrankClock } from './support/test-crank.js';

/** The machine itself, as an actor over a ScriptedChains, without the CrankService around it. */
function startMachine(chains: ScriptedChains) {
  const actor = createActor(crankMachine.provide({ actors: crankActors(chains, { attemptDeadlineMs: 300_000 }) }), {
    input: crankSettings(TEST_CRANK_SETTINGS),
  });
  const emitted: CrankEmitted[] = [];
  actor.on('*', (event) => emitted.push(event));
  actor.start();
  return { actor, emitted };
}

beforeEach(useCrankClock);
afterEach(() => {
  vi.useRealTimers();
});

describe('crank machine', () => {
  it('drops POLL while a cycle runs, and starts a cycle on POLL when idle', async () => {
    const chains = new ScriptedChains(bridgeView({ deposits: deposits(1), withdrawals: [] }));
    const held = chains.hold();
    chains.script('ackDeposits', held.reply);
    const { actor, emitted } = startMachine(chains);
    await held.started;
    actor.send({ type: 'POLL' });
    actor.send({ type: 'POLL' });
    expect(actor.getSnapshot().hasTag('busy')).toBe(true);
    held.release();
    await settle();
    expect(actor.getSnapshot().value).toBe('idle');
    expect(emitted.filter((event) => event.type === 'pollCoalesced')).toHaveLength(2);
    expect(emitted.filter((event) => event.type === 'cycleStarted')).toHaveLength(1);
    expect(chains.callsOf('readState')).toHaveLength(1);

    actor.send({ type: 'POLL' });
    await settle();
    expect(chains.callsOf('readState')).toHaveLength(2);
    actor.stop();
  });

  it('keeps a JSON-serializable context and snapshot in every phase, tagged busy and degraded', async () => {
    const chains = new ScriptedChains(bridgeView({ deposits: deposits(2), withdrawals: [] }));
    chains.script('ackDeposits', fails(retryableSubmitError('ack_deposit', ['landed-1'])));
    const { actor } = startMachine(chains);
    const seen: Array<{ value: unknown; busy: boolean; degraded: boolean }> = [];
    const check = () => {
      const snapshot = actor.getSnapshot();
      expect(JSON.parse(JSON.stringify(snapshot.context))).toEqual(snapshot.context);
      expect(() => JSON.stringify(actor.getPersistedSnapshot())).not.toThrow();
      seen.push({ value: snapshot.value, busy: snapshot.hasTag('busy'), degraded: snapshot.hasTag('degraded') });
    };
    check();
    await settle();
    check();
    await vi.advanceTimersByTimeAsync(1000);
    check();
    expect(seen).toEqual([
      { value: 'polling', busy: true, degraded: false },
      { value: { ack_deposit: 'retry-backoff' }, busy: true, degraded: true },
      { value: 'idle', busy: false, degraded: false },
    ]);
    expect(actor.getSnapshot().context.health.transactionsLanded).toBe(2);
    actor.stop();
  });

  it('answers every request queued during a cycle from the next cycle', async () => {
    const chains = new ScriptedChains(bridgeView({ deposits: deposits(1), withdrawals: [] }));
    const held = chains.hold();
    chains.script('ackDeposits', held.reply);
    const { actor, emitted } = startMachine(chains);
    await held.started;
    actor.send({ type: 'CRANK_ONCE', requestId: 'a' });
    actor.send({ type: 'CRANK_ONCE', requestId: 'b' });
    held.release();
    await settle();
    const finished = emitted.filter((event) => event.type === 'cycleFinished');
    expect(finished.map((event) => event.requests)).toEqual([[], ['a', 'b']]);
    actor.stop();
  });
});

describe('machine:export', () => {
  it('writes the machine definition with every state, for the Stately visualizer', () => {
    const definition = JSON.parse(crankMachineDefinition()) as { id: string; states: Record<string, { states?: Record<string, unknown> }> };
    expect(definition.id).toBe('crank');
    expect(Object.keys(definition.states).sort()).toEqual(
      ['ack_deposit', 'ack_withdraw', 'cleanup', 'finishing', 'idle', 'leasing', 'polling', 'stopped'].sort(),
    );
    expect(Object.keys(definition.states['ack_deposit']!.states!).sort()).toEqual([
      'checking',
      'failed',
      'replanning',
      'retry-backoff',
      'submitting',
    ]);
  });
});
