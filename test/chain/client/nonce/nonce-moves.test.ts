import { describe, expect, it } from 'vitest';
import { MAX_MOVES_KEPT, NonceMoves } from '../../../../src/chain/client/nonce/nonce-moves.js';
import { captureLogs } from '../../../support/log-capture.js';

/** Who moved a nonce, from the reads of the pool and the sender's outcomes alone. */

const LANE = 'Lane1111111111111111111111111111111111111111';

function moves() {
  const logs = captureLogs('info');
  return { ledger: new NonceMoves(logs.logger), logs };
}

describe('NonceMoves', () => {
  it('a move from a value this process signed nothing against is foreign; the first value seen is excused once (a previous life may have had a version in flight)', () => {
    const { ledger, logs } = moves();
    ledger.observe(LANE, 'A', 10);
    ledger.observe(LANE, 'B', 12);
    expect(ledger.drain()).toEqual([]);
    expect(logs.records()).toContainEqual(
      expect.objectContaining({ level: 'info', account: LANE, from: 'A', to: 'B', msg: expect.stringContaining('previous life') }),
    );
    ledger.observe(LANE, 'C', 15);
    expect(ledger.drain()).toEqual([{ account: LANE, from: 'B', to: 'C', slot: 15 }]);
    expect(ledger.drain()).toEqual([]);
  });

  it('a move by a version of this process that landed is its own, whichever comes first: the read or the outcome', () => {
    const { ledger } = moves();
    ledger.observe(LANE, 'A', 10);
    ledger.observe(LANE, 'B', 11);
    ledger.sent(LANE, 'B');
    ledger.settled(LANE, 'B', true);
    ledger.observe(LANE, 'C', 12);
    ledger.sent(LANE, 'C');
    ledger.observe(LANE, 'D', 13);
    ledger.settled(LANE, 'C', true);
    expect(ledger.drain()).toEqual([]);
  });

  it('while a version of its own may still land, the move waits for the outcome: none of them landed, it is foreign', () => {
    const { ledger } = moves();
    ledger.observe(LANE, 'A', 10);
    ledger.observe(LANE, 'B', 11);
    ledger.sent(LANE, 'B');
    ledger.sent(LANE, 'B');
    ledger.observe(LANE, 'C', 14);
    ledger.settled(LANE, 'B', false);
    expect(ledger.drain()).toEqual([]);
    ledger.settled(LANE, 'B', false);
    expect(ledger.drain()).toEqual([{ account: LANE, from: 'B', to: 'C', slot: 14 }]);
  });

  it('one inflated context slot does not blind it: a view counts as older only as far as the slot floor corroborates the last one', () => {
    const { ledger } = moves();
    ledger.observe(LANE, 'A', 10, 10);
    ledger.observe(LANE, 'B', 11, 10);
    ledger.observe(LANE, 'B', 1_000_011, 11);
    for (const [i, value] of ['C', 'D', 'E', 'F'].entries()) ledger.observe(LANE, value, 12 + i, 12 + i);
    expect(ledger.drain().map(({ from, to }) => `${from}>${to}`)).toEqual(['B>C', 'C>D', 'D>E', 'E>F']);
  });

  it('a view showing a value the account already left is older, whatever its slot', () => {
    const { ledger } = moves();
    ledger.observe(LANE, 'A', 10, 10);
    ledger.observe(LANE, 'B', 20, 10);
    ledger.observe(LANE, 'C', 30, 10);
    ledger.observe(LANE, 'B', 25, 10);
    ledger.observe(LANE, 'C', 31, 10);
    expect(ledger.drain()).toEqual([{ account: LANE, from: 'B', to: 'C', slot: 30 }]);
  });

  it('a read from an older view (a lagging endpoint) is not a move', () => {
    const { ledger } = moves();
    ledger.observe(LANE, 'A', 10);
    ledger.observe(LANE, 'B', 20);
    ledger.observe(LANE, 'A', 15);
    ledger.observe(LANE, 'B', 21);
    expect(ledger.drain()).toEqual([]);
  });

  it(`keeps at most ${MAX_MOVES_KEPT} moves between two reads, the newest, and says it dropped the rest`, () => {
    const { ledger, logs } = moves();
    for (let slot = 0; slot <= MAX_MOVES_KEPT + 2; slot++) ledger.observe(LANE, `V${slot}`, slot);
    const kept = ledger.drain();
    expect(kept).toHaveLength(MAX_MOVES_KEPT);
    expect(kept.at(-1)).toEqual({ account: LANE, from: `V${MAX_MOVES_KEPT + 1}`, to: `V${MAX_MOVES_KEPT + 2}`, slot: MAX_MOVES_KEPT + 2 });
    expect(logs.records().filter((record) => record.level === 'warn')).toHaveLength(1);
  });
});
