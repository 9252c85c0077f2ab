/**
 * What a lane's value is when the endpoints disagree (issue 39: a node can serve a nonce value
 * that never existed). A nonce value cannot be verified alone, but it need not be: a durable-nonce
 * transaction lands only against the value the account holds, and its landing moves the value,
 * so of the versions signed against different claimed values at most one can ever land. The
 * server therefore never has to decide who lies; it signs against one claimed value at a time
 * and, while the same dispute stands, against the next one on the next signature, so a value one
 * node forged delays a vote by one attempt instead of stopping the chain's votes.
 */

/** One endpoint's answer: the value it says the lane holds, at its context slot. */
export interface LaneClaim {
  endpoint: string;
  slot: number;
  nonce: string;
}

/** One claimed value, with the endpoints that claim it and the newest slot they claimed it at. */
export interface ClaimedValue {
  nonce: string;
  endpoints: string[];
  slot: number;
}

/**
 * The distinct values claimed, most believable first: claimed by more endpoints, then at a newer
 * slot (a lagging node's older value comes after the newer one), then by value (a fixed order).
 */
export function claimedValues(claims: readonly LaneClaim[]): ClaimedValue[] {
  const byValue = new Map<string, ClaimedValue>();
  for (const { endpoint, slot, nonce } of claims) {
    const known = byValue.get(nonce);
    if (known === undefined) byValue.set(nonce, { nonce, endpoints: [endpoint], slot });
    else {
      known.endpoints.push(endpoint);
      known.slot = Math.max(known.slot, slot);
    }
  }
  return [...byValue.values()].sort((a, b) => b.endpoints.length - a.endpoints.length || b.slot - a.slot || (a.nonce < b.nonce ? -1 : 1));
}

/** A dispute's identity: the same values claimed again (nothing landed against any of them). */
export function disputeKey(values: readonly ClaimedValue[]): string {
  return values
    .map((value) => value.nonce)
    .sort()
    .join(',');
}

/**
 * The value to sign against on the `turn`-th signature of one standing dispute (0 the first):
 * each claimed value in turn, most believable first, so every value is tried within as many
 * signatures as there are values claimed (at most one per endpoint).
 */
export function valueForTurn(values: readonly ClaimedValue[], turn: number): ClaimedValue {
  if (values.length === 0) throw new RangeError('no value was claimed');
  return values[turn % values.length]!;
}

/**
 * Whether versions signed against `held` may still land, as far as the claims tell: some
 * endpoint still claims it, and no other value is claimed by more endpoints (a value claimed by
 * more endpoints moved on from it, or it never was one).
 */
export function stillHeld(values: readonly ClaimedValue[], held: string): boolean {
  const mine = values.find((value) => value.nonce === held);
  return mine !== undefined && values.every((value) => value.endpoints.length <= mine.endpoints.length);
}
