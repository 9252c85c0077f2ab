import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NONCE_ACCOUNT_RENT_LAMPORTS, nonceAddress } from '../../src/chain/nonce-account.js';
import { startDevnetBridge, type DevnetBridge } from '../integration/support/devnet-bridge.js';
import { ensureBuilt } from '../support/server-process.js';
import { ops, secretForms, serverEnv } from './ops-cli.js';

/**
 * `npm run ops -- nonce init` as an operator runs it (the built CLI) against the devnet's System
 * program: it creates the authority's nonce accounts at their derived addresses, prints the
 * rent, and run again creates nothing; never a byte of the secret.
 */

let bridge: DevnetBridge | undefined;

beforeAll(ensureBuilt, 180_000);
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

interface PoolLine {
  chain: string;
  accounts: Array<{ address: string; state: string }>;
  rentLamports: number;
}

describe('npm run ops -- nonce init', () => {
  it('creates BRIDGE_NONCE_ACCOUNTS per chain, prints the rent, and is idempotent', async () => {
    bridge = await startDevnetBridge();
    const env = { ...serverEnv(bridge, 0), BRIDGE_NONCE_ACCOUNTS: '2' };
    const authority = bridge.authorities[0]!.publicKey;
    const chainIds = { source: bridge.world.source.chainId, target: bridge.world.target.chainId };

    const first = await ops(['nonce', 'init', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    const created = JSON.parse(first.stdout) as { authority: string; rent_lamports_per_account: number; chains: PoolLine[] };
    expect(created.rent_lamports_per_account).toBe(NONCE_ACCOUNT_RENT_LAMPORTS);
    for (const pool of created.chains) {
      const chainId = chainIds[pool.chain as 'source' | 'target'];
      expect(pool.accounts).toEqual([0, 1].map((k) => ({ address: nonceAddress(authority, chainId, k).toBase58(), state: 'created', signature: expect.any(String) })));
      expect(pool.rentLamports).toBe(2 * NONCE_ACCOUNT_RENT_LAMPORTS);
    }

    const again = await ops(['nonce', 'init'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('source chain: 2 nonce accounts; nothing created, nothing paid');
    expect(again.stdout).toContain('destination chain: 2 nonce accounts; nothing created, nothing paid');
    for (const secret of secretForms(bridge.world.authorities[0]!.keypairPath)) expect(first.stdout + again.stdout + again.stderr).not.toContain(secret);
  });
});
