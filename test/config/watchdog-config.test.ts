import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import { isBridgeError } from '../../src/errors.js';

/** The watchdog's variables: halt and flow limits need the file; flow limits are named after a mint. */

const RUNTIME = {
  BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:8899',
  BRIDGE_TARGET_RPC_URL: 'http://127.0.0.1:8999',
  BRIDGE_SOURCE_CHAIN_ID: '1',
  BRIDGE_TARGET_CHAIN_ID: '2',
  BRIDGE_AUTHORITY_KEYPAIR: '/secrets/authority.json',
};
const MINT = 'So11111111111111111111111111111111111111112';
const HASH = 'AB'.repeat(32);

function problemsOf(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (err) {
    if (isBridgeError(err, 'CONFIG__INVALID')) return err.context.problems;
    throw err;
  }
  return [];
}

describe('the watchdog settings', () => {
  it('report by default: continue, no file, no hash, no flow limit', () => {
    expect(parseConfig(RUNTIME).config.crank?.watchdog).toEqual({
      onInvariantBreach: 'continue',
      watchdogFile: undefined,
      programHashes: {},
      flowLimits: [],
    });
  });

  it('reads halt with its file, the hashes (lower-cased) and a flow limit per mint, which is no unknown variable', () => {
    const env = {
      ...RUNTIME,
      BRIDGE_ON_INVARIANT_BREACH: 'halt',
      BRIDGE_WATCHDOG_FILE: '/var/lib/bridge/watchdog.jsonl',
      BRIDGE_TARGET_PROGRAM_HASH: HASH,
      [`BRIDGE_FLOW_LIMIT_${MINT}`]: '1000000000/24',
    };
    const { config, warnings } = parseConfig(env);
    expect(config.crank?.watchdog).toEqual({
      onInvariantBreach: 'halt',
      watchdogFile: '/var/lib/bridge/watchdog.jsonl',
      programHashes: { target: HASH.toLowerCase() },
      flowLimits: [{ mint: MINT, amount: 1_000_000_000n, windowMs: 24 * 3_600_000 }],
    });
    expect(warnings).toEqual([]);
  });

  it('refuses halt or a flow limit without the file, a malformed limit or hash, each naming its variable', () => {
    expect(problemsOf({ ...RUNTIME, BRIDGE_ON_INVARIANT_BREACH: 'halt' })).toEqual([
      expect.stringMatching(/^BRIDGE_WATCHDOG_FILE: missing; BRIDGE_ON_INVARIANT_BREACH=halt/),
    ]);
    expect(problemsOf({ ...RUNTIME, [`BRIDGE_FLOW_LIMIT_${MINT}`]: '5/1' })).toEqual([
      expect.stringMatching(/^BRIDGE_WATCHDOG_FILE: missing; a flow limit/),
    ]);
    const file = { BRIDGE_WATCHDOG_FILE: '/tmp/w' };
    expect(problemsOf({ ...RUNTIME, ...file, [`BRIDGE_FLOW_LIMIT_${MINT}`]: '5' })).toEqual([
      expect.stringMatching(new RegExp(`^BRIDGE_FLOW_LIMIT_${MINT}: expected <amount>/<hours>`)),
    ]);
    expect(problemsOf({ ...RUNTIME, ...file, [`BRIDGE_FLOW_LIMIT_${MINT}`]: '5/9000' })).toHaveLength(1);
    expect(problemsOf({ ...RUNTIME, ...file, BRIDGE_FLOW_LIMIT_not_a_mint: '5/1' })).toEqual([
      'BRIDGE_FLOW_LIMIT_not_a_mint: the name must end in a base58 source mint',
    ]);
    expect(problemsOf({ ...RUNTIME, BRIDGE_SOURCE_PROGRAM_HASH: 'abc' })).toEqual([
      expect.stringMatching(/^BRIDGE_SOURCE_PROGRAM_HASH: expected the sha256/),
    ]);
  });
});
