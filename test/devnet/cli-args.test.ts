import { describe, expect, it } from 'vitest';
import { UsageError, parseDemoFlags, parseDevnetFlags, shellQuote } from '../../devnet/cli-args.js';

const MAX_CAPACITY = 72_000;

function usageError(parse: () => unknown): string {
  try {
    parse();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a UsageError');
}

describe('parseDevnetFlags', () => {
  it('has documented defaults: ports 8899/8999, 3 authorities, majority threshold, .devnet', () => {
    expect(parseDevnetFlags([], MAX_CAPACITY)).toEqual({
      sourcePort: 8899,
      targetPort: 8999,
      authorities: 3,
      threshold: 2,
      capacity: 10_000,
      dir: '.devnet',
      traffic: false,
      slotIntervalMs: 400,
      computeCostScale: 1,
      priceFloor: 0,
      forwardPercent: 100,
      commitmentLags: { confirmedLagSlots: 2, finalizedLagSlots: 32 },
      forkPercent: 0,
    });
    expect(parseDevnetFlags(['--confirmed-lag', '1', '--finalized-lag', '10', '--fork-percent', '5'], MAX_CAPACITY)).toMatchObject({
      commitmentLags: { confirmedLagSlots: 1, finalizedLagSlots: 10 },
      forkPercent: 5,
    });
    expect(parseDevnetFlags(['--finalized-lag', '0'], MAX_CAPACITY)).toMatchObject({
      commitmentLags: { confirmedLagSlots: 0, finalizedLagSlots: 0 },
    });
    expect(parseDevnetFlags(['--slot-interval-ms', '0', '--confirmed-lag', '0', '--finalized-lag', '0'], MAX_CAPACITY)).toMatchObject({
      slotIntervalMs: 0,
    });
    expect(parseDevnetFlags(['--compute-cost-scale', '6', '--price-floor', '20000', '--forward-percent', '10'], MAX_CAPACITY)).toMatchObject({
      computeCostScale: 6,
      priceFloor: 20_000,
      forwardPercent: 10,
    });
    expect(parseDevnetFlags(['--compute-cost-scale', '0.5'], MAX_CAPACITY)).toMatchObject({ computeCostScale: 0.5 });
    expect(parseDevnetFlags(['--authorities', '5'], MAX_CAPACITY)).toMatchObject({ threshold: 3 });
    expect(parseDevnetFlags(['--authorities', '1'], MAX_CAPACITY)).toMatchObject({ threshold: 1 });
    expect(parseDevnetFlags(['--traffic', '--dir', 'x', '--source-port', '0', '--target-port', '0'], MAX_CAPACITY)).toMatchObject({
      traffic: true,
      dir: 'x',
      sourcePort: 0,
      targetPort: 0,
    });
    expect(parseDevnetFlags(['-h'], MAX_CAPACITY)).toBe('help');
  });

  it.each([
    [['--prot', '1'], "Unknown option '--prot'"],
    [['--authorities', '17'], '--authorities must be an integer from 1 to 16, got "17"'],
    [['--authorities', '3', '--threshold', '4'], '--threshold must be an integer from 1 to 3, got "4"'],
    [['--capacity', 'lots'], '--capacity must be an integer'],
    [['--capacity', String(MAX_CAPACITY + 1)], `--capacity must be an integer from 1 to ${MAX_CAPACITY}`],
    [['--capacity', '1.5'], '--capacity'],
    [['--source-port', '70000'], '--source-port must be an integer from 0 to 65535'],
    [['--source-port', '9000', '--target-port', '9000'], '--source-port and --target-port must differ'],
    [['--dir'], "'--dir <value>' argument missing"],
    [['--traffic=yes'], '--traffic'],
    [['stray'], "'stray'"],
    [['--compute-cost-scale', '0'], '--compute-cost-scale must be a number above 0 and at most 100, got "0"'],
    [['--compute-cost-scale', '101'], '--compute-cost-scale must be a number above 0 and at most 100'],
    [['--compute-cost-scale', '-2'], '--compute-cost-scale'],
    [['--compute-cost-scale', '1e3'], '--compute-cost-scale'],
    [['--price-floor', '1.5'], '--price-floor must be an integer from 0 to 1000000'],
    [['--price-floor', '1000001'], '--price-floor must be an integer from 0 to 1000000'],
    [['--forward-percent', '101'], '--forward-percent must be an integer from 0 to 100'],
  ])('%j is a usage error naming the flag', (argv, message) => {
    expect(usageError(() => parseDevnetFlags(argv, MAX_CAPACITY))).toContain(message);
  });
});

describe('parseDemoFlags', () => {
  it('defaults the first server port to 8081 and the directory to .devnet/demo', () => {
    expect(parseDemoFlags([])).toEqual({
      serverPort: 8081,
      sourcePort: 8899,
      targetPort: 8999,
      dir: '.devnet/demo',
      computeCostScale: 1,
      congestion: 0,
      commitmentLags: { confirmedLagSlots: 2, finalizedLagSlots: 32 },
      forwardPercent: 100,
    });
    expect(parseDemoFlags(['--congestion', '20000', '--compute-cost-scale', '6', '--forward-percent', '25'])).toMatchObject({
      congestion: 20_000,
      computeCostScale: 6,
      forwardPercent: 25,
    });
  });

  it('refuses lags a devnet cannot run: confirmed past finalized, lags without a slot timer, forks without a confirmed lag', () => {
    expect(usageError(() => parseDevnetFlags(['--confirmed-lag', '5', '--finalized-lag', '4'], MAX_CAPACITY))).toContain(
      '--confirmed-lag must be an integer from 0 to 4',
    );
    expect(usageError(() => parseDevnetFlags(['--finalized-lag', '151'], MAX_CAPACITY))).toContain(
      '--finalized-lag must be an integer from 0 to 150',
    );
    expect(usageError(() => parseDevnetFlags(['--slot-interval-ms', '0'], MAX_CAPACITY))).toContain('--slot-interval-ms 0 stops the slot timer');
    expect(usageError(() => parseDevnetFlags(['--confirmed-lag', '0', '--fork-percent', '10'], MAX_CAPACITY))).toContain(
      '--fork-percent needs --confirmed-lag 1',
    );
    expect(usageError(() => parseDemoFlags(['--finalized-lag', 'x']))).toContain('--finalized-lag must be an integer');
  });

  it('rejects unknown flags and a server port without room for three servers', () => {
    expect(usageError(() => parseDemoFlags(['--servers', '3']))).toContain("'--servers'");
    expect(usageError(() => parseDemoFlags(['--server-port', '65534']))).toContain('--server-port must be an integer from 1 to 65533');
    expect(usageError(() => parseDemoFlags(['--congestion', 'high']))).toContain('--congestion must be an integer from 0 to 1000000');
  });
});

describe('shellQuote', () => {
  it('leaves plain values alone and single-quotes the rest', () => {
    expect(shellQuote('/tmp/dir/authority-0.json')).toBe('/tmp/dir/authority-0.json');
    expect(shellQuote('http://127.0.0.1:8899')).toBe('http://127.0.0.1:8899');
    expect(shellQuote("/tmp/my dir/it's.json")).toBe(`'/tmp/my dir/it'\\''s.json'`);
  });
});
