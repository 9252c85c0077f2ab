import { describe, expect, it } from 'vitest';
import { crankHealth, crankHealthSchema, healthVerdict, type HealthFacts, type HealthInput, type HealthStatus } from '../../src/machines/health.js';
import { initialLease } from '../../src/machines/lease.js';

const START = 1_795_000_000_000;
const STALLED_AFTER_MS = 60_000;
const HOLD_MS = 15 * 60_000;

const FACTS: HealthFacts = {
  lastRunAtMs: START + 1000,
  lastSuccessAtMs: null,
  lastError: null,
  lastAction: null,
  transactionsLanded: 0,
  lastCycleFinishedAtMs: START + 2000,
  fees: { source: { balance: 50_000_000, need: 0 }, target: { balance: 50_000_000, need: 10_000 } },
  foreignSigner: null,
  role: { role: 'active', sinceMs: START, quietSinceMs: START, heardSinceMs: START, extraQuietMs: 0, otherSigner: null, waitReason: null },
  lease: initialLease({ handoffMs: 0, pollIntervalMs: 1_000, dryRun: false }),
  unlandedSinceMs: null,
};

const FOREIGN = { chain: 'target' as const, signature: '5Foreign', slot: 77, seenAtMs: START + 2000 };

function input(facts: Partial<HealthFacts> = {}, overrides: Partial<HealthInput> = {}): HealthInput {
  return {
    enabled: true,
    internalError: null,
    startedAtMs: START,
    facts: { ...FACTS, ...facts },
    settings: { onForeignSigner: 'continue', minBalanceLamports: 1_000_000, handoffMs: 300_000 },
    stalledAfterMs: STALLED_AFTER_MS,
    foreignSignerHoldMs: HOLD_MS,
    retrying: null,
    endpointProblems: [],
    ...overrides,
  };
}

const AT = START + 10_000;
const NO_LANDING = { transactions: 0, landed: 0, first_version_rate: null, slots_p50: null, slots_p90: null, versions_per_landed: null };

describe('healthVerdict', () => {
  it.each<[string, HealthInput, number, HealthStatus, RegExp | null]>([
    ['disabled crank', input({}, { enabled: false }), AT, 'ok', null],
    ['clean latest cycle', input(), AT, 'ok', null],
    ['before the first cycle, within the bound', input({ lastCycleFinishedAtMs: null, fees: null }), START + STALLED_AFTER_MS, 'ok', null],
    [
      'before the first cycle, past the bound',
      input({ lastCycleFinishedAtMs: null, fees: null }),
      START + STALLED_AFTER_MS + 1,
      'stalled',
      /no crank cycle has finished since the start 60 s ago, beyond the 60 s bound/,
    ],
    ['latest cycle finished exactly at the bound', input(), START + 2000 + STALLED_AFTER_MS, 'ok', null],
    [
      'latest cycle finished past the bound',
      input(),
      START + 2000 + STALLED_AFTER_MS + 1,
      'stalled',
      /no crank cycle has finished 60 s ago.*restart the server/,
    ],
    [
      'internal error',
      input({}, { enabled: false, internalError: 'the crank stopped on an internal error: boom' }),
      AT,
      'stalled',
      /^the crank stopped on an internal error: boom; restart the server$/,
    ],
    [
      'an action backing off after a failed attempt',
      input({}, { retrying: 'attempt 1 of 3 failed: HTTP 500' }),
      AT,
      'degraded',
      /^retrying after a failed attempt: attempt 1 of 3 failed: HTTP 500$/,
    ],
    [
      'failed action (last_error set)',
      input({ lastError: 'ack_deposit 1..2 (2 votes) failed after 3 attempts: timeout' }),
      AT,
      'degraded',
      /^ack_deposit 1\.\.2/,
    ],
    [
      'cannot pay the plan on the destination',
      input({ fees: { source: FACTS.fees!.source, target: { balance: 4_999, need: 10_000 } } }),
      AT,
      'degraded',
      /^the authority holds 4999 lamports on the destination chain, less than the 10000 lamports this cycle's transactions there need in fees: nothing is sent there until it is funded$/,
    ],
    [
      'below BRIDGE_MIN_BALANCE_LAMPORTS on the source',
      input({ fees: { source: { balance: 999_999, need: 0 }, target: FACTS.fees!.target } }),
      AT,
      'degraded',
      /^the authority holds 999999 lamports on the source chain, below BRIDGE_MIN_BALANCE_LAMPORTS \(1000000\): fund it/,
    ],
    [
      'foreign signature, within the hold',
      input({ foreignSigner: FOREIGN, lastCycleFinishedAtMs: FOREIGN.seenAtMs + HOLD_MS }),
      FOREIGN.seenAtMs + HOLD_MS,
      'degraded',
      /^transaction 5Foreign on the destination chain \(slot 77\) was signed with this authority's key but not by this server: .*SPEC §8.*stop the other one$/,
    ],
    [
      'foreign signature, after the hold',
      input({ foreignSigner: FOREIGN, lastCycleFinishedAtMs: FOREIGN.seenAtMs + HOLD_MS }),
      FOREIGN.seenAtMs + HOLD_MS + 1,
      'ok',
      null,
    ],
    [
      'an RPC endpoint of another cluster',
      input({}, { endpointProblems: ['RPC endpoint http://127.0.0.1:8900 in BRIDGE_SOURCE_RPC_FALLBACK_URLS is a node of another cluster'] }),
      AT,
      'degraded',
      /^RPC endpoint http:\/\/127\.0\.0\.1:8900 in BRIDGE_SOURCE_RPC_FALLBACK_URLS is a node of another cluster$/,
    ],
    [
      'halted on a foreign signature, long after',
      input(
        { foreignSigner: FOREIGN, lastCycleFinishedAtMs: START + 10 * HOLD_MS },
        { settings: { onForeignSigner: 'halt', minBalanceLamports: 0, handoffMs: 300_000 } },
      ),
      START + 10 * HOLD_MS,
      'degraded',
      /submits nothing until it is restarted \(BRIDGE_ON_FOREIGN_SIGNER=halt\)$/,
    ],
  ])('%s', (_name, status, now, expected, problem) => {
    const verdict = healthVerdict(status, now);
    expect(verdict.status).toBe(expected);
    if (problem === null) expect(verdict.problems).toEqual([]);
    else expect(verdict.problems[0]).toMatch(problem);
  });

  it('lists every problem, most urgent first: a stall, then the failure, fees, balance, second signer', () => {
    const status = input({
      lastError: 'reading the trackers failed: timeout',
      fees: { source: { balance: 10, need: 5000 }, target: { balance: 500, need: 0 } },
      foreignSigner: FOREIGN,
    });
    const verdict = healthVerdict(status, START + 2000 + STALLED_AFTER_MS + 1);
    expect(verdict.status).toBe('stalled');
    const expected = [
      /^no crank cycle has finished 60 s ago/,
      /^reading the trackers failed: timeout$/,
      /^the authority holds 10 lamports on the source chain, less than the 5000 lamports/,
      /^the authority holds 500 lamports on the destination chain, below BRIDGE_MIN_BALANCE_LAMPORTS/,
      /^transaction 5Foreign on the destination chain/,
    ];
    expect(verdict.problems).toHaveLength(expected.length);
    for (const [i, problem] of verdict.problems.entries()) expect(problem).toMatch(expected[i]!);
    // A chain that cannot pay the plan is not warned about twice.
    expect(verdict.problems.filter((problem) => problem.includes('source chain'))).toHaveLength(1);
  });

  it('a second signer seen minutes ago comes after what fails now: the newest problem heads last_error', () => {
    const held = input(
      { foreignSigner: FOREIGN, lastCycleFinishedAtMs: FOREIGN.seenAtMs + 10 * 60_000 },
      { retrying: 'attempt 1 of 3 failed: sendTransaction answered HTTP 500', endpointProblems: ['https://rpc.example.com serves another cluster'] },
    );
    const verdict = healthVerdict(held, FOREIGN.seenAtMs + 10 * 60_000);
    expect(verdict.status).toBe('degraded');
    expect(verdict.problems[0]).toBe('retrying after a failed attempt: attempt 1 of 3 failed: sendTransaction answered HTTP 500');
    expect(verdict.problems[1]).toBe('https://rpc.example.com serves another cluster');
    expect(verdict.problems.at(-1)).toMatch(/^transaction 5Foreign on the destination chain/);
  });

  it('a minimum of 0 never warns', () => {
    const verdict = healthVerdict(
      input(
        { fees: { source: { balance: 0, need: 0 }, target: { balance: 0, need: 0 } } },
        { settings: { onForeignSigner: 'continue', minBalanceLamports: 0, handoffMs: 300_000 } },
      ),
      AT,
    );
    expect(verdict).toEqual({ status: 'ok', problems: [] });
  });
});

describe('crankHealth: the signer the public /health names', () => {
  const extras = {
    dryRun: false,
    checksOff: [],
    lifetimeModes: { source: 'nonce' as const, target: 'nonce' as const },
    leaseMayTakeAtMs: 0,
    versionsInFlight: { source: 0, target: 0 },
    landing: { source: NO_LANDING, target: NO_LANDING },
  };
  const verdict = { status: 'ok' as const, problems: [] };

  it.each([
    [{ kind: 'aws-kms' as const, key: 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab' }, { kind: 'aws-kms' }],
    [
      { kind: 'gcp-kms' as const, key: 'projects/bridge/locations/global/keyRings/operators/cryptoKeys/authority/cryptoKeyVersions/1' },
      { kind: 'gcp-kms' },
    ],
    [{ kind: 'vault-transit' as const, key: 'transit/bridge-authority' }, { kind: 'vault-transit' }],
    [
      { kind: 'pkcs11' as const, token: 'bridge', session: 'open' as const },
      { kind: 'pkcs11', token: 'bridge', session: 'open' },
    ],
    [{ kind: 'file' as const }, { kind: 'file' }],
  ])('%o is shown as %o: a key service by its kind, never the key ARN or resource name', (signer, shown) => {
    const health = crankHealth(FACTS, true, verdict, { ...extras, signer });
    expect(health.signer).toEqual(shown);
    expect(crankHealthSchema.parse(health).signer).toEqual(shown);
    expect(JSON.stringify(health)).not.toContain('key');
  });
});
