import { describe, expect, it } from 'vitest';
import { isBridgeError } from '../../src/errors.js';
import { DISABLED_CRANK_HEALTH } from '../../src/machines/health.js';
import { createDisabledCrank } from '../../src/machines/disabled-crank.js';

describe('createDisabledCrank', () => {
  it('reports enabled false and the all-null health of SPEC §2.2', () => {
    const crank = createDisabledCrank();
    expect(crank.health()).toEqual(DISABLED_CRANK_HEALTH);
  });

  it('hands out a copy, so that no caller can alter what the next one sees', () => {
    const crank = createDisabledCrank();
    crank.health().last_error = 'changed';
    expect(crank.health().last_error).toBeNull();
    expect(DISABLED_CRANK_HEALTH.last_error).toBeNull();
  });

  it('refuses runOnce with CRANK__DISABLED, naming the five variables to set', async () => {
    const err: unknown = await createDisabledCrank()
      .runOnce()
      .catch((e: unknown) => e);
    expect(isBridgeError(err, 'CRANK__DISABLED')).toBe(true);
    for (const name of [
      'BRIDGE_SOURCE_RPC_URL',
      'BRIDGE_TARGET_RPC_URL',
      'BRIDGE_SOURCE_CHAIN_ID',
      'BRIDGE_TARGET_CHAIN_ID',
      'BRIDGE_AUTHORITY_KEYPAIR',
    ]) {
      expect((err as Error).message).toContain(name);
    }
  });

  it('stops at once', async () => {
    await expect(createDisabledCrank().stop(30_000)).resolves.toBeUndefined();
  });
});
