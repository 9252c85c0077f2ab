import { afterEach, describe, expect, it } from 'vitest';
import { nonceAddress } from '../../src/chain/nonce-account.js';
import { loadOpsContext } from '../../src/ops/context.js';
import { nonceInit } from '../../src/ops/nonce.js';
import { startDevnetBridge, type DevnetBridge } from '../integration/support/devnet-bridge.js';
import { serverEnv } from './ops-cli.js';

/**
 * `nonce init`'s question, in process (the CLI asks it on a terminal, which a spawned test has
 * not): the plan is shown first, the question names what is paid and by whom, and anything but
 * yes sends nothing.
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('nonce init asks before it pays', () => {
  it('shows the plan, asks what it pays; no sends nothing, yes sets the pool up', async () => {
    bridge = await startDevnetBridge();
    const ctx = await loadOpsContext({ ...serverEnv(bridge, 0), BRIDGE_NONCE_ACCOUNTS: '1' });
    const authority = bridge.authorities[0]!.publicKey;
    const shown: string[] = [];
    const asked: string[] = [];
    const options = (answer: boolean) => ({
      yes: false,
      dryRun: false,
      readTimeoutMs: 10_000,
      show: (text: string) => shown.push(text),
      confirm: async (question: string) => {
        asked.push(question);
        return answer;
      },
    });
    const address = nonceAddress(authority, bridge.world.target.chainId, 0);

    await expect(nonceInit(ctx, options(false), AbortSignal.timeout(30_000))).rejects.toMatchObject({
      code: 'CONFIG__INVALID',
      message: expect.stringContaining('not confirmed: nothing sent'),
    });
    expect(shown).toHaveLength(1);
    expect(shown[0]).toContain(`${address.toBase58()} to create`);
    expect(asked).toEqual([`pay ${2 * (1_447_680 + 5_000)} lamports from authority ${authority.toBase58()}? [y/N] `]);
    expect(bridge.pair.target.getAccount(address)).toBeUndefined();

    const { text } = await nonceInit(ctx, options(true), AbortSignal.timeout(30_000));
    expect(text).toContain(`${address.toBase58()} created (transaction `);
    expect(bridge.pair.target.getAccount(address)?.data).toHaveLength(80);

    // Nothing left to pay: nothing asked.
    await nonceInit(ctx, options(false), AbortSignal.timeout(30_000));
    expect(asked).toHaveLength(2);
  });
});
