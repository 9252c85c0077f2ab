import { Keypair, PublicKey } from '@solana/web3.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NONCE_ACCOUNT_RENT_LAMPORTS, nonceAccountState, nonceAddress } from '../../src/chain/nonce-account.js';
import { startDevnetBridge, type DevnetBridge } from '../integration/support/devnet-bridge.js';
import { keypairDir } from '../support/keypair-files.js';
import { ensureBuilt } from '../support/server-process.js';
import { ops, secretForms, serverEnv } from './ops-cli.js';

/**
 * `npm run ops -- nonce init` as an operator runs it (the built CLI, stdin not a terminal)
 * against the devnet's System program: it checks the configuration and the authority's balance
 * before paying anything, shows what it pays, pays only with --yes, sets up the authority's nonce
 * accounts at their derived addresses (also one someone funded first), and run again sets up
 * nothing; never a byte of the secret.
 */

let bridge: DevnetBridge | undefined;
const cleanups: Array<() => void> = [];

beforeAll(ensureBuilt, 180_000);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await bridge?.close();
  bridge = undefined;
});

interface PoolLine {
  chain: string;
  accounts: Array<{ address: string; state: string }>;
  rentLamports: number;
}

type Side = 'source' | 'target';
const nodeOf = (b: DevnetBridge, side: Side) => (side === 'source' ? b.pair.source : b.pair.target);
const lamportsOf = (b: DevnetBridge, side: Side, key: { toBase58(): string }) => nodeOf(b, side).bank.account(key.toBase58())?.lamports ?? 0n;
/** What the devnet holds at the authority's pool addresses: this authority's nonce account, or what else. */
function poolStates(b: DevnetBridge, side: Side, authority: Keypair, size: number): string[] {
  const chainId = side === 'source' ? b.world.source.chainId : b.world.target.chainId;
  return Array.from({ length: size }, (_, k) => {
    const account = nodeOf(b, side).getAccount(nonceAddress(authority.publicKey, chainId, k));
    return account === undefined
      ? 'missing'
      : nonceAccountState({ owner: new PublicKey(account.owner), data: account.data }, authority.publicKey).kind;
  });
}

describe('npm run ops -- nonce init', () => {
  it('with --yes: sets up BRIDGE_NONCE_ACCOUNTS per chain, prints the rent, and is idempotent', async () => {
    bridge = await startDevnetBridge();
    const env = { ...serverEnv(bridge, 0), BRIDGE_NONCE_ACCOUNTS: '2' };
    const authority = bridge.authorities[0]!.publicKey;
    const chainIds = { source: bridge.world.source.chainId, target: bridge.world.target.chainId };

    const first = await ops(['nonce', 'init', '--yes', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    const created = JSON.parse(first.stdout) as { authority: string; rent_lamports_per_account: number; pay_lamports: number; chains: PoolLine[] };
    expect(created.rent_lamports_per_account).toBe(NONCE_ACCOUNT_RENT_LAMPORTS);
    expect(created.pay_lamports).toBe(2 * 2 * (NONCE_ACCOUNT_RENT_LAMPORTS + 5_000));
    for (const pool of created.chains) {
      const chainId = chainIds[pool.chain as 'source' | 'target'];
      expect(pool.accounts).toEqual(
        [0, 1].map((k) => ({ address: nonceAddress(authority, chainId, k).toBase58(), state: 'created', signature: expect.any(String) })),
      );
      expect(pool.rentLamports).toBe(2 * NONCE_ACCOUNT_RENT_LAMPORTS);
    }

    // Run again without --yes and without a terminal: nothing to pay, so nothing to ask.
    const again = await ops(['nonce', 'init'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('source chain: 2 nonce accounts; nothing created, nothing paid');
    expect(again.stdout).toContain('destination chain: 2 nonce accounts; nothing created, nothing paid');
    for (const secret of secretForms(bridge.world.authorities[0]!.keypairPath))
      expect(first.stdout + again.stdout + again.stderr).not.toContain(secret);
  });

  it('an address someone funded first is set up all the same: allocated, topped up to the rent, initialized', async () => {
    bridge = await startDevnetBridge();
    const env = { ...serverEnv(bridge, 0), BRIDGE_NONCE_ACCOUNTS: '2' };
    const key = bridge.authorities[0]!;
    const blocked = nonceAddress(key.publicKey, bridge.world.source.chainId, 0);
    // ~0.00089 SOL, the amount: CreateAccountWithSeed would fail for good on it (AccountAlreadyInUse).
    bridge.pair.source.airdrop(blocked, 890_880n);
    const before = lamportsOf(bridge, 'source', key.publicKey);

    const shown = await ops(['nonce', 'init', '--dry-run'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      `${blocked.toBase58()} holds 890880 lamports someone sent: to set up (allocate, top up ${NONCE_ACCOUNT_RENT_LAMPORTS - 890_880}, initialize)`,
    );

    const run = await ops(['nonce', 'init', '--yes'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`${blocked.toBase58()} created (transaction `);
    expect(poolStates(bridge, 'source', key, 2)).toEqual(['ready', 'ready']);
    expect(poolStates(bridge, 'target', key, 2)).toEqual(['ready', 'ready']);
    expect(lamportsOf(bridge, 'source', blocked)).toBe(BigInt(NONCE_ACCOUNT_RENT_LAMPORTS));
    // The authority paid the top-up, one full rent and two fees: the gift is kept in the account.
    expect(before - lamportsOf(bridge, 'source', key.publicKey)).toBe(
      BigInt(NONCE_ACCOUNT_RENT_LAMPORTS - 890_880 + NONCE_ACCOUNT_RENT_LAMPORTS + 2 * 5_000),
    );
  });

  it('an unfunded authority is told what it has and what it needs, on which chain; nothing is sent', async () => {
    bridge = await startDevnetBridge();
    const files = keypairDir();
    cleanups.push(() => files.remove());
    const poor = Keypair.generate();
    const path = files.write('poor.json', JSON.stringify([...poor.secretKey]));
    bridge.pair.source.airdrop(poor.publicKey, 1_000_000n);
    const env = { ...serverEnv(bridge, 0), BRIDGE_AUTHORITY_KEYPAIR: path, BRIDGE_NONCE_ACCOUNTS: '2' };
    const run = await ops(['nonce', 'init', '--yes'], env);
    expect(run.code).toBe(1);
    const needed = 2 * (NONCE_ACCOUNT_RENT_LAMPORTS + 5_000) + 890_880;
    expect(run.stderr).toContain(
      `authority ${poor.publicKey.toBase58()} has 1000000 lamports on chain ${bridge.world.source.chainId} (the source chain); needs at least ${needed}`,
    );
    expect(lamportsOf(bridge, 'source', poor.publicKey)).toBe(1_000_000n);
    const json = await ops(['nonce', 'init', '--yes', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: 'CHAIN__INSUFFICIENT_FUNDS' });
  });

  it('a wrong BRIDGE_SOURCE_CHAIN_ID is refused before anything is paid, as ops status refuses it; --dry-run shows the plan and sends nothing; without --yes and without a terminal it refuses, saying to pass --yes', async () => {
    bridge = await startDevnetBridge();
    const env = { ...serverEnv(bridge, 0), BRIDGE_NONCE_ACCOUNTS: '1' };
    const key = bridge.authorities[0]!;
    const wrong = { ...serverEnv(bridge, 0), BRIDGE_NONCE_ACCOUNTS: '1', BRIDGE_SOURCE_CHAIN_ID: String(bridge.world.source.chainId + 7) };
    const balances = () => [lamportsOf(bridge!, 'source', key.publicKey), lamportsOf(bridge!, 'target', key.publicKey)];
    const before = balances();
    const status = await ops(['status'], wrong);
    const run = await ops(['nonce', 'init', '--yes'], wrong);
    expect(status.code).toBe(1);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('BRIDGE_SOURCE_CHAIN_ID');
    // The refused attempt is audited (one line, outcome failed), then refused as status refuses it.
    const [audited, ...refusal] = run.stderr.split('\n');
    expect(JSON.parse(audited!)).toMatchObject({
      msg: 'audit',
      audit: { what: 'ops nonce init', outcome: expect.stringMatching(/^failed: .*BRIDGE_SOURCE_CHAIN_ID/s) },
    });
    expect(refusal.join('\n')).toBe(status.stderr);
    expect(balances()).toEqual(before);
    expect(poolStates(bridge, 'source', key, 1)).toEqual(['missing']);

    const dry = await ops(['nonce', 'init', '--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      `destination chain (id ${bridge.world.target.chainId}): 1 nonce accounts; 1 to set up: pays ${NONCE_ACCOUNT_RENT_LAMPORTS + 5_000} lamports`,
    );
    expect(dry.stdout).toContain('--dry-run: nothing sent');
    const dryJson = JSON.parse((await ops(['nonce', 'init', '--dry-run', '--json'], env)).stdout) as { dry_run: boolean; pay_lamports: number };
    expect(dryJson).toMatchObject({ dry_run: true, pay_lamports: 2 * (NONCE_ACCOUNT_RENT_LAMPORTS + 5_000) });

    const asked = await ops(['nonce', 'init'], env);
    expect(asked.code).toBe(1);
    expect(asked.stdout).toContain('1 to set up');
    expect(asked.stderr).toContain(
      `ops: nonce init would pay ${2 * (NONCE_ACCOUNT_RENT_LAMPORTS + 5_000)} lamports from authority ${key.publicKey.toBase58()}; stdin is not a terminal, so it cannot ask: pass --yes`,
    );

    expect(balances()).toEqual(before);
    expect(poolStates(bridge, 'target', key, 1)).toEqual(['missing']);
    expect(poolStates(bridge, 'source', key, 1)).toEqual(['missing']);
  });

  it('--help says what running it against a live server does', async () => {
    const help = await ops(['nonce', 'init', '--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--yes');
    expect(help.stdout).toContain('--dry-run');
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      "the operator's own (they create and initialize this key's own nonce accounts: never a foreign signer), logs an info line, and switches each chain to nonce mode at its next cycle",
    );
  });
});
