import { describe, expect, it } from 'vitest';
import { claimedValues, disputeKey, stillHeld, valueForTurn, type LaneClaim } from '../../../../src/chain/client/nonce/nonce-claims.js';

const claim = (endpoint: string, nonce: string, slot = 100): LaneClaim => ({ endpoint, nonce, slot });

describe('nonce claims: what a lane holds when the endpoints disagree', () => {
  it('one value claimed by every endpoint is the one value, at the newest slot that claimed it', () => {
    expect(claimedValues([claim('a', 'N1', 100), claim('b', 'N1', 104)])).toEqual([{ nonce: 'N1', endpoints: ['a', 'b'], slot: 104 }]);
  });

  it('orders values by endpoints claiming them, then by the newest slot, then by value', () => {
    const values = claimedValues([claim('a', 'OLD', 90), claim('b', 'NEW', 100), claim('c', 'NEW', 99), claim('d', 'ODD', 101)]);
    expect(values.map((value) => value.nonce)).toEqual(['NEW', 'ODD', 'OLD']);
    // A lagging node's older value comes after the newer one when each has one endpoint.
    expect(claimedValues([claim('lagging', 'V0', 60), claim('fresh', 'V1', 100)]).map((value) => value.nonce)).toEqual(['V1', 'V0']);
    expect(claimedValues([claim('a', 'Y', 5), claim('b', 'X', 5)]).map((value) => value.nonce)).toEqual(['X', 'Y']);
  });

  it('each claimed value is signed against in turn while the dispute stands: a forged value delays by one signature, never stops', () => {
    const values = claimedValues([claim('primary', 'FORGED', 101), claim('fallback', 'REAL', 100)]);
    const turns = [0, 1, 2, 3].map((turn) => valueForTurn(values, turn).nonce);
    expect(turns).toEqual(['FORGED', 'REAL', 'FORGED', 'REAL']);
    expect(() => valueForTurn([], 0)).toThrow(RangeError);
  });

  it('the same values claimed again are the same dispute, whatever the endpoints or slots', () => {
    const first = disputeKey(claimedValues([claim('a', 'X', 1), claim('b', 'Y', 2)]));
    expect(disputeKey(claimedValues([claim('b', 'X', 7), claim('a', 'Y', 3)]))).toBe(first);
    expect(disputeKey(claimedValues([claim('a', 'X', 1), claim('b', 'Z', 2)]))).not.toBe(first);
  });

  it('versions against a value may still land while some endpoint claims it and no other value has more endpoints', () => {
    const tie = claimedValues([claim('a', 'X'), claim('b', 'Y')]);
    expect(stillHeld(tie, 'X')).toBe(true);
    expect(stillHeld(tie, 'Y')).toBe(true);
    const outnumbered = claimedValues([claim('a', 'X'), claim('b', 'Y'), claim('c', 'Y')]);
    expect(stillHeld(outnumbered, 'X')).toBe(false);
    expect(stillHeld(outnumbered, 'Y')).toBe(true);
    expect(stillHeld(tie, 'GONE')).toBe(false);
  });
});
