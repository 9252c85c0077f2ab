import fc from 'fast-check';
import { describe, it } from 'vitest';
import { checkProperty } from './profile.js';

/**
 * Three failing properties whose replay commands property-tests/support/replay.test.ts pastes
 * (excluded from the suite unless BRIDGE_REPLAY_FIXTURE=1, see vitest.config.ts). Their names
 * hold regex and shell syntax, and each is a substring of another test's full name, so only a
 * pattern that is escaped, quoted and anchored at both ends selects exactly one test.
 */

const FIXTURE_NAME = "fails (n < 7?) [$HOME] 'quoted' \\d+ a|b > c";

function failingProperty(): Promise<void> {
  return checkProperty(
    'below seven',
    fc.asyncProperty(fc.nat({ max: 1_000 }), async (n) => {
      if (n >= 7) throw new Error(`${n} is not below seven`);
    }),
    100,
  );
}

describe('replay fixture', () => {
  it(FIXTURE_NAME, failingProperty);
  it(`${FIXTURE_NAME} too`, failingProperty);
});

describe('a replay fixture', () => {
  it(FIXTURE_NAME, failingProperty);
});
