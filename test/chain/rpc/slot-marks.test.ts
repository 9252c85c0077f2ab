import { describe, expect, it } from 'vitest';
import {
  corroboratedSlot,
  corroboratingClaim,
  isVouched,
  MARK_FRESH_MS,
  MIN_RATE_SPAN_MS,
  nextRun,
  NOMINAL_SLOT_MS,
  RATE_MARGIN,
  slotCeiling,
  slotRateBound,
  type EndpointClaims,
  type SlotMark,
} from '../../../src/chain/rpc/slot-marks.js';

/** The arithmetic that decides which slot claims the server believes (docs/chain-client.md, "What a node can claim"). */

const NOW = 1_000_000;
const LAG = 128;
const mark = (slot: number, ago = 0): SlotMark => ({ slot, at: NOW - ago });
const claims = (latest?: SlotMark, previous?: SlotMark, pending?: SlotMark): EndpointClaims => ({ latest, previous, pending, run: undefined });
const nominal = RATE_MARGIN / NOMINAL_SLOT_MS;

describe('corroboratedSlot: a slot two answers reached', () => {
  it.each([
    { case: 'nobody answered', all: [claims(), claims()], expected: undefined },
    { case: 'one answer of one endpoint', all: [claims(mark(1_000)), claims()], expected: undefined },
    { case: 'the lone endpoint: the lower of its last two', all: [claims(mark(1_010), mark(1_000, 500))], expected: mark(1_000, 500) },
    { case: 'the lone endpoint after one inflated answer and one honest', all: [claims(mark(1_020), mark(9_999_999, 500))], expected: mark(1_020) },
    { case: 'two endpoints: the lower of the two', all: [claims(mark(1_000)), claims(mark(9_999_999))], expected: mark(1_000) },
    {
      case: 'three endpoints, one liar: the second highest',
      all: [claims(mark(1_000)), claims(mark(9_999_999)), claims(mark(1_002))],
      expected: mark(1_002),
    },
    {
      case: 'three endpoints, one lagging: the second highest',
      all: [claims(mark(800)), claims(mark(1_000)), claims(mark(1_002))],
      expected: mark(1_000),
    },
    {
      case: 'a mark older than MARK_FRESH_MS corroborates nothing',
      all: [claims(mark(1_000), mark(990, 400)), claims(mark(10, MARK_FRESH_MS + 1))],
      expected: mark(990, 400),
    },
  ])('$case', ({ all, expected }) => {
    expect(corroboratedSlot(all, NOW)).toEqual(expected);
  });
});

describe('slotRateBound: how fast slots can rise, measured', () => {
  it.each([
    { case: 'no samples: nothing measured', samples: [], expected: undefined },
    {
      case: 'samples spanning less than MIN_RATE_SPAN_MS: nothing measured',
      samples: [mark(0, MIN_RATE_SPAN_MS - 1), mark(1_000)],
      expected: undefined,
    },
    { case: 'a chain at its nominal 400 ms a slot: twice that', samples: [mark(1_000, 10_000), mark(1_025)], expected: nominal },
    { case: 'a chain slower than nominal (a halt): still nominal', samples: [mark(1_000, 20_000), mark(1_001)], expected: nominal },
    {
      case: 'a devnet at 20 ms a slot: twice what was measured',
      samples: [mark(1_000, 10_000), mark(1_500)],
      expected: RATE_MARGIN * (500 / 10_000),
    },
  ])('$case', ({ samples, expected }) => {
    const rate = slotRateBound(samples);
    if (expected === undefined) expect(rate).toBeUndefined();
    else expect(rate).toBeCloseTo(expected, 10);
  });
});

describe('slotCeiling: C.slot + maxSlotLag + ceil(rate x elapsed)', () => {
  it.each([
    { case: 'nothing corroborated: no ceiling', corroborated: undefined, rate: nominal, expected: Infinity },
    { case: 'no rate measured yet: no ceiling', corroborated: mark(1_000), rate: undefined, expected: Infinity },
    { case: 'at the moment C was claimed', corroborated: mark(1_000), rate: nominal, expected: 1_000 + LAG },
    { case: '10 s later at the nominal bound (50 slots)', corroborated: mark(1_000, 10_000), rate: nominal, expected: 1_000 + LAG + 50 },
    {
      case: '10 s later on a devnet measured at 20 ms a slot',
      corroborated: mark(1_000, 10_000),
      rate: RATE_MARGIN / 20,
      expected: 1_000 + LAG + 1_000,
    },
  ])('$case', ({ corroborated, rate, expected }) => {
    expect(slotCeiling(corroborated, rate, LAG, NOW)).toBe(expected);
  });
});

describe("corroboratingClaim: another endpoint's answer backs a claim beyond the ceiling (the chain itself moved)", () => {
  it.each([
    {
      case: "another endpoint's pending claim at the same height",
      all: [claims(mark(1_000)), claims(undefined, undefined, mark(1_400, 100))],
      expected: { index: 1, pending: mark(1_400, 100) },
    },
    {
      case: "another endpoint's latest mark at the same height",
      all: [claims(mark(1_000)), claims(mark(1_390, 100))],
      expected: { index: 1, pending: undefined },
    },
    { case: 'its own pending claim: nothing', all: [claims(mark(1_000), undefined, mark(1_400, 100)), claims(mark(1_001))], expected: undefined },
    {
      case: 'a pending claim far from it (a liar at 10^9): nothing',
      all: [claims(mark(1_000)), claims(undefined, undefined, mark(1_000_000_000, 100))],
      expected: undefined,
    },
    {
      case: 'a pending claim older than MARK_FRESH_MS: nothing',
      all: [claims(mark(1_000)), claims(undefined, undefined, mark(1_400, MARK_FRESH_MS + 1))],
      expected: undefined,
    },
  ])('$case', ({ all, expected }) => {
    expect(corroboratingClaim(all, 0, 1_400, nominal, LAG, NOW)).toEqual(expected);
  });
});

describe("nextRun and isVouched: the claimant's own claims back it when they rise as a chain does", () => {
  const run = (first: SlotMark, last: SlotMark) => ({ first, last });
  it.each([
    { case: 'the first claim starts a run', before: undefined, claim: mark(1_400), rate: nominal, expected: run(mark(1_400), mark(1_400)) },
    {
      case: 'a rise within what the chain makes continues it',
      before: run(mark(1_400, 2_000), mark(1_404, 1_000)),
      claim: mark(1_409),
      rate: nominal,
      expected: run(mark(1_400, 2_000), mark(1_409)),
    },
    {
      case: 'a repeat continues it (and adds no rise)',
      before: run(mark(1_400, 2_000), mark(1_400, 1_000)),
      claim: mark(1_400),
      rate: nominal,
      expected: run(mark(1_400, 2_000), mark(1_400)),
    },
    {
      case: 'a jump beyond maxSlotLag plus the pace starts a new run',
      before: run(mark(1_400, 2_000), mark(1_404, 1_000)),
      claim: mark(1_404 + LAG + 6),
      rate: nominal,
      expected: run(mark(1_404 + LAG + 6), mark(1_404 + LAG + 6)),
    },
    {
      case: 'a fall starts a new run',
      before: run(mark(1_400, 2_000), mark(1_404, 1_000)),
      claim: mark(1_000),
      rate: nominal,
      expected: run(mark(1_000), mark(1_000)),
    },
    {
      case: 'while the pace is not measured, any rise continues it',
      before: run(mark(1_400, 2_000), mark(1_404, 1_000)),
      claim: mark(9_999),
      rate: undefined,
      expected: run(mark(1_400, 2_000), mark(9_999)),
    },
  ])('$case', ({ before, claim, rate, expected }) => {
    expect(nextRun(before, claim, rate, LAG)).toEqual(expected);
  });

  it.each([
    { case: 'no run', run: undefined, vouched: false },
    { case: 'risen over MIN_RATE_SPAN_MS', run: run(mark(1_400, MIN_RATE_SPAN_MS), mark(1_403)), vouched: true },
    { case: 'risen over less than MIN_RATE_SPAN_MS', run: run(mark(1_400, MIN_RATE_SPAN_MS - 1), mark(1_403)), vouched: false },
    { case: 'one far slot repeated for a minute', run: run(mark(1_000_000_000, 60_000), mark(1_000_000_000)), vouched: false },
  ])('$case: $vouched', ({ run: one, vouched }) => {
    expect(isVouched(one)).toBe(vouched);
  });
});
