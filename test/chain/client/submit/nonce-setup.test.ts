import { Keypair, PublicKey, SystemProgram } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { FileKeySigner } from '../../../../src/signer/file-key-signer.js';
import { neededLamports, planNoncePool, setUpNoncePool, type NoncePoolSetup } from '../../../../src/chain/client/submit/nonce-setup.js';
import { NONCE_ACCOUNT_RENT_LAMPORTS, nonceAddress, nonceSeed } from '../../../../src/chain/nonce-account.js';
import { DEFAULT_PROGRAM_ID } from '../../../../src/chain/codec/layout.js';
import { createChainRpc } from '../../../../src/chain/rpc/chain-rpc.js';
import { createMetrics } from '../../../../src/metrics/metrics.js';
import { FakeChain } from '../fake-chain.js';
import { authority, TARGET_CHAIN_ID, trackerHeader } from '../bridge-fixture.js';

/** `npm run ops -- nonce init`'s work on one chain, against the scripted node. */

let chain: FakeChain | undefined;

afterEach(async () => {
  await chain?.close();
  chain = undefined;
});

async function start(): Promise<FakeChain> {
  chain = await new FakeChain(new PublicKey(DEFAULT_PROGRAM_ID), PublicKey.unique(), {
    header: trackerHeader('WithdrawTracker', { entryCount: 0, ownNext: 0 }),
    entries: [],
  }).start();
  return chain;
}

const rpcOf = (url: string) => createChainRpc({ chain: 'target', url, timeoutMs: 2_000, metrics: createMetrics(new Registry()) });
const input = (url: string, size: number) => ({ rpc: rpcOf(url), authority: authority.publicKey, chainId: TARGET_CHAIN_ID, size });
async function initialize(url: string, size: number): Promise<NoncePoolSetup> {
  const plan = await planNoncePool(input(url, size), signal());
  return setUpNoncePool(rpcOf(url), new FileKeySigner(authority), plan, signal());
}
const signal = () => AbortSignal.timeout(10_000);

describe('nonce init', () => {
  it('creates the missing accounts at the derived addresses, then, run again, creates nothing', async () => {
    const fake = await start();
    const first = await initialize(fake.url, 2);
    const addresses = [0, 1].map((position) => nonceAddress(authority.publicKey, TARGET_CHAIN_ID, position).toBase58());
    expect(first.accounts.map(({ address, state }) => ({ address, state }))).toEqual(addresses.map((address) => ({ address, state: 'created' })));
    expect(first.rentLamports).toBe(2 * NONCE_ACCOUNT_RENT_LAMPORTS);
    expect(addresses.every((address) => fake.nonces.get(address)?.authority.equals(authority.publicKey))).toBe(true);
    expect(nonceSeed(TARGET_CHAIN_ID, 1)).toBe(`bridge-nonce-${TARGET_CHAIN_ID}-1`);
    expect(await PublicKey.createWithSeed(authority.publicKey, nonceSeed(TARGET_CHAIN_ID, 1), SystemProgram.programId)).toEqual(
      new PublicKey(addresses[1]!),
    );

    const sent = fake.sends.length;
    const again = await initialize(fake.url, 2);
    expect(again.accounts.map((account) => account.state)).toEqual(['present', 'present']);
    expect(again.rentLamports).toBe(0);
    expect(fake.sends).toHaveLength(sent);
  });

  it('an account at a pool address that is not this authority’s nonce stops it, naming the address', async () => {
    const fake = await start();
    const address = nonceAddress(authority.publicKey, TARGET_CHAIN_ID, 0);
    fake.nonces.set(address.toBase58(), { authority: Keypair.generate().publicKey, value: FakeChain.nonceValue() });
    await expect(planNoncePool(input(fake.url, 1), signal())).rejects.toThrow(
      `nonce account ${address.toBase58()} on the destination chain is unusable: its nonce authority is`,
    );
    expect(fake.sends).toHaveLength(0);
  });

  it('the rent is the runtime’s rent-exempt minimum for 80 bytes', () => {
    expect(NONCE_ACCOUNT_RENT_LAMPORTS).toBe(1_447_680);
  });

  it('plans from reads alone: what each address needs, the fees, and the authority’s own rent-exempt minimum on top', async () => {
    const fake = await start();
    fake.balances.set(authority.publicKey.toBase58(), 7_000_000);
    const plan = await planNoncePool(input(fake.url, 2), signal());
    expect(plan).toMatchObject({
      chain: 'target',
      chainId: TARGET_CHAIN_ID,
      authorityLamports: 7_000_000,
      feeLamports: 10_000,
      payLamports: 2 * NONCE_ACCOUNT_RENT_LAMPORTS + 10_000,
    });
    expect(plan.accounts.map((account) => account.state)).toEqual(['missing', 'missing']);
    expect(neededLamports(plan)).toBe(2 * NONCE_ACCOUNT_RENT_LAMPORTS + 10_000 + 890_880);
    expect(neededLamports({ ...plan, payLamports: 0 })).toBe(0);
    expect(fake.sends).toHaveLength(0);
  });
});
