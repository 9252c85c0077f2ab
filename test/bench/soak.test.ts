import { describe, expect, it } from 'vitest';
import { explainingFault } from '../../bench/soak/fault-schedule.js';
import { runSoak } from '../../bench/soak/run-soak.js';
import { explainingGovernance, IDLE_BOUND } from '../../bench/soak/soak-report.js';
import { defaultSeededEntries, soakCapacity } from '../../bench/soak/run-soak.js';
import { slope, sumOf } from '../../bench/soak/server-samples.js';

/**
 * The soak's 15-second profile: the same harness as `npm run soak` (devnet with seeded
 * trackers, three dist/index.js processes, traffic, faults switching, autocannon on /health),
 * short and small. It checks the end-of-run invariants the soak exists for, not a timing: its
 * phases are as short as still lets each happen, since the wall time they add is the suite's:
 * three fault kinds; governance changes at 4, 8 and 12 s (the first of each kind starts in a
 * quiet phase, 7 s or more before the run ends); two idle cycles of the servers' 2 s poll.
 */

describe('soak, 15-second profile', () => {
  it('every transfer completes, no vote lands twice, fees equal landed transactions, every error line is explained by a fault', {
    timeout: 240_000,
  }, async () => {
    const result = await runSoak({
      minutes: 0.25,
      authorities: 3,
      threshold: 2,
      seededEntries: 2_000,
      healthRate: 100,
      healthSeconds: 2,
      depositsPerSecond: 2,
      faultPhaseMs: 2_500,
      governanceEveryMs: 4_000,
      idleCyclesMs: 5_000,
      signal: AbortSignal.timeout(230_000),
    });
    expect(result.failures).toEqual([]);
    const [overview, perServer, health, latency] = result.tables;
    // Every stage of every transfer the run deposited was timed, each at least as late as the one before.
    expect(latency!.rows.map((row) => row.stage)).toEqual(['ack_deposit', 'claimable', 'ack_withdraw', 'cleanup']);
    for (const row of latency!.rows) expect(row.transfers as number, String(row.stage)).toBeGreaterThan(0);
    const p50s = latency!.rows.map((row) => row.p50 as number);
    expect([...p50s].sort((a, b) => a - b)).toEqual(p50s);
    const governance = overview!.rows.find((row) => String(row.what).startsWith('governance changes landed'));
    expect(governance?.value).toMatch(/^[1-9]\d* \/ [1-9]\d*$/);
    expect(perServer!.rows).toHaveLength(3);
    for (const row of perServer!.rows) {
      expect(row.landed as number).toBeGreaterThan(0);
      expect(row.feesPaid).toBe(row.landed);
      expect(row.duplicateVotes).toBe(0);
      expect(row.errorLinesUnexplained).toBe(0);
      expect(row.samples as number).toBeGreaterThan(5);
      expect(row.idleRpcSource as number).toBeLessThanOrEqual(IDLE_BOUND.requests.source);
      expect(row.idleRpcTarget as number).toBeLessThanOrEqual(IDLE_BOUND.requests.target);
    }
    for (const row of health!.rows) {
      expect(row.requests as number).toBeGreaterThan(0);
      expect(row.errors).toBe(0);
    }
  });
});

describe('soak helpers', () => {
  it('sumOf adds every series of one metric and nothing of a longer-named one', () => {
    const text = [
      '# HELP x',
      'bridge_rpc_requests_total{chain="source"} 3',
      'bridge_rpc_requests_total{chain="target"} 4',
      'bridge_rpc_requests_totalx 100',
      'process_resident_memory_bytes 2048',
    ].join('\n');
    expect(sumOf(text, 'bridge_rpc_requests_total')).toBe(7);
    expect(sumOf(text, 'process_resident_memory_bytes')).toBe(2048);
    expect(sumOf(text, 'bridge_rpc_requests_total', 'chain="target"')).toBe(4);
  });

  it('slope is the least-squares growth per unit', () => {
    expect(
      slope([
        { x: 0, y: 100 },
        { x: 1, y: 110 },
        { x: 2, y: 120 },
      ]),
    ).toBe(10);
    expect(slope([{ x: 0, y: 100 }])).toBe(0);
  });

  it('error lines are explained by the fault their text names, or not at all', () => {
    expect(explainingFault('... failed: HTTP 500 Internal Server Error ...')).toBe('http500');
    expect(explainingFault('... transaction X not landed: its blockhash expired ...')).toBe('lost or dropped send');
    expect(explainingFault('getAccountInfo ... failed: endpoint http://127.0.0.1:1 is taken out after 3 consecutive failures')).toBe(
      'every endpoint taken out by request faults',
    );
    expect(explainingFault('TypeError: cannot read properties of undefined')).toBeUndefined();
  });

  it('sizes the trackers for the seeded entries and every deposit the run can make, and refuses a run that cannot fit', () => {
    expect(soakCapacity({ seededEntries: 60_000, minutes: 30, depositsPerSecond: 2 })).toBe(60_000 + 3_960 + 64);
    expect(defaultSeededEntries({ minutes: 30, depositsPerSecond: 2 })).toBe(60_000);
    expect(defaultSeededEntries({ minutes: 60, depositsPerSecond: 2 })).toBe(65_530 - 7_984);
    expect(() => soakCapacity({ seededEntries: 60_000, minutes: 60, depositsPerSecond: 2 })).toThrow(
      '--seeded 60000 plus 60 min of deposits at 2/s (room for 7984) need 67984 tracker entries, above the 65530 a DepositTracker holds: pass --seeded 57546 or less',
    );
    expect(() => soakCapacity({ seededEntries: 1, minutes: 600, depositsPerSecond: 2 })).toThrow(
      /^600 min of deposits at 2\/s need room for 79264 tracker entries, .*: run at most 495\.9 min$/,
    );
  });

  it("a vote refused after a governance change is explained by it only within the change's window", () => {
    const changes = [{ chain: 'target' as const, slot: 10, seenAtMs: 1_000_000 }];
    const refused = 'crank: ack_deposit failed ... VoteOutOfOrder ...';
    expect(explainingGovernance(refused, 1_030_000, changes)).toBe('governance change');
    expect(explainingGovernance(refused, 1_000_000 + 121_000, changes)).toBeUndefined();
    expect(explainingGovernance(refused, 990_000, changes)).toBeUndefined();
    expect(explainingGovernance('crank: ack_deposit failed ... HTTP 503', 1_030_000, changes)).toBeUndefined();
  });
});
