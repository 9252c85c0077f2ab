import { describe, expect, it } from 'vitest';
import {
  demotionOf,
  endpointLabels,
  foreignEndpoints,
  probeDue,
  readOrder,
  sendTargets,
  type EndpointKnowledge,
} from '../../../src/chain/rpc/endpoint-choice.js';

const settings = { maxSlotLag: 128, frozenAfterMs: 10_000 };
const NOW = 100_000;

function endpoint(index: number, known: Partial<EndpointKnowledge> = {}): EndpointKnowledge {
  return { index, open: false, silent: false, foreign: false, notBefore: undefined, slot: 1_000, ahead: false, advancedAt: NOW - 500, ...known };
}

describe('which endpoint serves a read', () => {
  it('the primary while it is fit, then the fallbacks in configured order', () => {
    expect(readOrder([endpoint(0), endpoint(1), endpoint(2)], NOW, settings)).toEqual([0, 1, 2]);
  });

  it('an open circuit goes last; a demoted endpoint goes after the fit ones', () => {
    const all = [endpoint(0, { open: true }), endpoint(1, { slot: 800 }), endpoint(2)];
    expect(readOrder(all, NOW, settings)).toEqual([2, 1, 0]);
  });

  it('an endpoint waiting out a Retry-After goes after the ready ones, before the demoted ones', () => {
    const all = [endpoint(0, { notBefore: NOW + 1 }), endpoint(1, { slot: 800 }), endpoint(2)];
    expect(readOrder(all, NOW, settings)).toEqual([2, 0, 1]);
  });

  it('nothing known yet (no probe answered): configured order', () => {
    const unknown = { slot: undefined, advancedAt: undefined };
    expect(readOrder([endpoint(0, unknown), endpoint(1, unknown)], NOW, settings)).toEqual([0, 1]);
  });
});

describe('when an endpoint is demoted', () => {
  it.each([
    { lag: 128, expected: undefined },
    { lag: 129, expected: 'lagging' },
    { lag: 200, expected: 'lagging' },
  ])('$lag slots behind the best with BRIDGE_RPC_MAX_SLOT_LAG 128 -> $expected', ({ lag, expected }) => {
    const all = [endpoint(0, { slot: 5_000 - lag }), endpoint(1, { slot: 5_000 })];
    expect(demotionOf(all[0]!, all, NOW, settings)).toBe(expected);
    expect(demotionOf(all[1]!, all, NOW, settings)).toBeUndefined();
  });

  it('the best slot ignores endpoints whose circuit is open', () => {
    const all = [endpoint(0, { slot: 1_000 }), endpoint(1, { slot: 9_000, open: true })];
    expect(demotionOf(all[0]!, all, NOW, settings)).toBeUndefined();
  });

  it('a slot that stopped advancing while another advances -> stalled', () => {
    const all = [endpoint(0, { advancedAt: NOW - 10_001 }), endpoint(1)];
    expect(demotionOf(all[0]!, all, NOW, settings)).toBe('stalled');
    expect(demotionOf(all[0]!, all, NOW - 2, settings)).toBeUndefined();
  });

  it('an endpoint whose latest request got no answer is down (silent), whatever its slot', () => {
    const all = [endpoint(0, { silent: true }), endpoint(1)];
    expect(demotionOf(all[0]!, all, NOW, settings)).toBe('silent');
    expect(readOrder(all, NOW, settings)).toEqual([1, 0]);
  });

  it('every slot stopped (a halted chain): nobody is demoted', () => {
    const all = [endpoint(0, { advancedAt: NOW - 60_000 }), endpoint(1, { advancedAt: NOW - 50_000 })];
    expect(all.map((one) => demotionOf(one, all, NOW, settings))).toEqual([undefined, undefined]);
  });
});

describe('where a signed transaction goes', () => {
  it('to every endpoint in service', () => {
    const all = [endpoint(0), endpoint(1, { open: true }), endpoint(2), endpoint(3, { slot: 1 })];
    expect(sendTargets(all, NOW, settings)).toEqual([0, 2]);
  });

  it('not to one waiting out a Retry-After while another is ready; to it when it is the only one in service', () => {
    const waiting = endpoint(0, { notBefore: NOW + 3_000 });
    expect(sendTargets([waiting, endpoint(1)], NOW, settings)).toEqual([1]);
    expect(sendTargets([waiting, endpoint(1, { open: true })], NOW, settings)).toEqual([0]);
    expect(sendTargets([endpoint(0, { notBefore: NOW }), endpoint(1)], NOW, settings)).toEqual([0, 1]);
  });

  it('to all of them when none is in service', () => {
    const all = [endpoint(0, { open: true }), endpoint(1, { open: true })];
    expect(sendTargets(all, NOW, settings)).toEqual([0, 1]);
  });
});

describe('when the slots are probed', () => {
  it('never before, or at least one interval after the last probe', () => {
    expect(probeDue(undefined, NOW, 2_000)).toBe(true);
    expect(probeDue(NOW - 1_999, NOW, 2_000)).toBe(false);
    expect(probeDue(NOW - 2_000, NOW, 2_000)).toBe(true);
  });
});

describe('endpoint labels', () => {
  it('are origins, never paths or queries; #k only when two share an origin', () => {
    expect(endpointLabels(['https://a.example.org/v1?api-key=secret', 'http://127.0.0.1:8899/'])).toEqual([
      'https://a.example.org',
      'http://127.0.0.1:8899',
    ]);
    expect(endpointLabels(['https://a.example.org/k1', 'https://a.example.org/k2', 'https://b.example.org/'])).toEqual([
      'https://a.example.org#1',
      'https://a.example.org#2',
      'https://b.example.org',
    ]);
  });
});

describe('nodes of another cluster (genesis hashes)', () => {
  const OURS = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
  const THEIRS = '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY';

  it.each<[string, (string | undefined)[], boolean[]]>([
    ['the primary answered: a fallback that differs is foreign', [OURS, OURS, THEIRS], [false, false, true]],
    ['the primary answered: it is the reference, even against the majority', [OURS, THEIRS, THEIRS], [false, true, true]],
    ['the primary did not answer: the majority decides', [undefined, OURS, OURS, THEIRS], [false, false, false, true]],
    ['the primary did not answer and no majority: undecided, none foreign', [undefined, OURS, THEIRS], [false, false, false]],
    ['an endpoint that did not answer is not foreign', [OURS, undefined], [false, false]],
  ])('%s', (_name, genesis, foreign) => {
    expect(foreignEndpoints(genesis)).toEqual(foreign);
  });

  it('a foreign endpoint serves no read and no send, and its slot demotes nobody', () => {
    const all = [endpoint(0, { open: true }), endpoint(1, { foreign: true, slot: 900_000 }), endpoint(2)];
    expect(readOrder(all, NOW, settings)).toEqual([2, 0]);
    expect(sendTargets(all, NOW, settings)).toEqual([2]);
    expect(demotionOf(all[2]!, all, NOW, settings)).toBeUndefined();
  });

  it('with every other endpoint out, sends still skip the foreign one', () => {
    const all = [endpoint(0, { open: true }), endpoint(1, { foreign: true })];
    expect(sendTargets(all, NOW, settings)).toEqual([0]);
  });
});
