import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeTokenPair, decodeTrackerHeader } from '../../../src/chain/codec/accounts.js';
import { DEFAULT_PROGRAM_ID } from '../../../src/chain/codec/layout.js';
import { depositTrackerAddress, tokenPairAddress, withdrawTrackerAddress } from '../../../src/chain/pda.js';
import { startChainPair, type ChainPair } from '../../../devnet/chain-pair.js';
import { TOKEN_PAIR_KINDS, bootstrapWorld, type World } from '../../../devnet/world/bootstrap.js';
import { isDevnetError } from '../../../devnet/devnet-error.js';

let dir: string;
let pair: ChainPair;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'devnet-world-'));
  pair = await startChainPair({ slotIntervalMs: 0 });
});

afterEach(async () => {
  await pair.close();
  await rm(dir, { recursive: true, force: true });
});

async function keypairFrom(path: string): Promise<Keypair> {
  return Keypair.fromSecretKey(Uint8Array.from(JSON.parse(await readFile(path, 'utf8')) as number[]));
}

describe('bootstrapWorld', () => {
  it('writes Solana CLI keypair files with mode 0600 and a world.json describing the bridge', async () => {
    const world = await bootstrapWorld(pair, { authorities: 3, threshold: 2, capacity: 64, dir });
    const onDisk = JSON.parse(await readFile(join(dir, 'world.json'), 'utf8')) as World;
    expect(onDisk).toEqual(world);
    expect(world).toMatchObject({
      programId: DEFAULT_PROGRAM_ID,
      source: { rpcUrl: pair.source.url, chainId: 1, depositTracker: depositTrackerAddress(pair.source.programId, 2).toBase58() },
      target: { rpcUrl: pair.target.url, chainId: 2, withdrawTracker: withdrawTrackerAddress(pair.target.programId, 1).toBase58() },
      threshold: 2,
      capacity: 64,
    });
    expect(world.authorities.map((a) => a.keypairPath)).toEqual([0, 1, 2].map((k) => join(dir, `authority-${k}.json`)));
    for (const key of [...world.authorities, world.governance]) {
      expect((await stat(key.keypairPath)).mode & 0o777).toBe(0o600);
      const raw = JSON.parse(await readFile(key.keypairPath, 'utf8')) as number[];
      expect(raw).toHaveLength(64);
      expect((await keypairFrom(key.keypairPath)).publicKey.toBase58()).toBe(key.publicKey);
    }
  });

  it('initializes both trackers and funds the authorities on both chains through real transactions', async () => {
    const world = await bootstrapWorld(pair, { authorities: 3, threshold: 2, capacity: 64, dir });
    const authorities = world.authorities.map((a) => a.publicKey);
    const deposit = decodeTrackerHeader(pair.source.getAccount(world.source.depositTracker)!.data, 'DepositTracker', 'test');
    const withdraw = decodeTrackerHeader(pair.target.getAccount(world.target.withdrawTracker)!.data, 'WithdrawTracker', 'test');
    for (const header of [deposit, withdraw]) {
      expect(header).toMatchObject({
        sourceChainId: 1,
        targetChainId: 2,
        threshold: 2,
        capacity: 64n,
        governance: world.governance.publicKey,
        authorities,
      });
    }
    // Four set_token_pair transactions each bumped the generation.
    expect(withdraw.generation).toBe(4n);
    const connection = new Connection(pair.source.url);
    for (const authority of authorities) {
      expect(await connection.getBalance(new PublicKey(authority))).toBeGreaterThan(1e9);
    }
  });

  it('sets the four token pairs: normal, frozen, low limit, low vault', async () => {
    const world = await bootstrapWorld(pair, { authorities: 1, threshold: 1, capacity: 8, dir });
    expect(Object.keys(world.tokenPairs).sort()).toEqual([...TOKEN_PAIR_KINDS].sort());
    for (const kind of TOKEN_PAIR_KINDS) {
      const entry = world.tokenPairs[kind];
      const address = tokenPairAddress(pair.target.programId, 1, new PublicKey(entry.sourceMint));
      expect(entry.address).toBe(address.toBase58());
      const onChain = decodeTokenPair(pair.target.getAccount(address)!.data, address.toBase58());
      expect({
        sourceMint: onChain.sourceMint,
        targetMint: onChain.targetMint,
        frozen: onChain.frozen,
        limitRemaining: onChain.limitRemaining.toString(),
        vaultBalance: onChain.vaultBalance.toString(),
      }).toEqual({
        sourceMint: entry.sourceMint,
        targetMint: entry.targetMint,
        frozen: entry.frozen,
        limitRemaining: entry.limitRemaining,
        vaultBalance: entry.vaultBalance,
      });
    }
    expect(world.tokenPairs.frozen.frozen).toBe(true);
    expect(world.tokenPairs.lowLimit.limitRemaining).toBe('1000');
    expect(world.tokenPairs.lowVault.vaultBalance).toBe('500');
  });

  it('reuses existing keypair files on a second run in the same directory', async () => {
    const first = await bootstrapWorld(pair, { authorities: 2, threshold: 1, capacity: 8, dir });
    const second = await startChainPair({ slotIntervalMs: 0 });
    try {
      const again = await bootstrapWorld(second, { authorities: 2, threshold: 1, capacity: 8, dir });
      expect(again.authorities).toEqual(first.authorities);
      expect(again.governance).toEqual(first.governance);
    } finally {
      await second.close();
    }
  });

  it('rejects a threshold above the authority count, naming the option', async () => {
    const error = await bootstrapWorld(pair, { authorities: 2, threshold: 3, capacity: 8, dir }).catch((err: unknown) => err);
    expect(isDevnetError(error, 'DEVNET__INVALID_OPTION')).toBe(true);
    expect((error as Error).message).toContain('threshold');
  });
});
