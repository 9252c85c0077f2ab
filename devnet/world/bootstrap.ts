import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Keypair, LAMPORTS_PER_SOL, type Connection, type PublicKey } from '@solana/web3.js';
import { initializeTrackerInstruction, setTokenPairInstruction } from '../instructions.js';
import { MAX_AUTHORITIES, maxTrackerCapacity } from '../../src/chain/codec/layout.js';
import { depositTrackerAddress, tokenPairAddress, withdrawTrackerAddress } from '../../src/chain/pda.js';
import type { ChainPair } from '../chain-pair.js';
import { checkInteger, invalidOption, type DevnetNode } from '../node.js';
import { ensureKeypairFile } from './keypair-files.js';
import { awaitStatus, devnetConnection, submitTransaction } from './submit.js';

/**
 * A ready-to-use bridge on a chain pair: authority and governance keypair files, funded
 * accounts, both trackers initialized and four token pairs set, all through real transactions;
 * the result is written to DIR/world.json for people and scripts.
 */

export const TOKEN_PAIR_KINDS = ['normal', 'frozen', 'lowLimit', 'lowVault'] as const;
export type TokenPairKind = (typeof TOKEN_PAIR_KINDS)[number];

const LARGE = 1_000_000_000_000_000n;
const TOKEN_PAIR_SETTINGS: Record<TokenPairKind, { frozen: boolean; limitRemaining: bigint; vaultBalance: bigint }> = {
  normal: { frozen: false, limitRemaining: LARGE, vaultBalance: LARGE },
  frozen: { frozen: true, limitRemaining: LARGE, vaultBalance: LARGE },
  lowLimit: { frozen: false, limitRemaining: 1_000n, vaultBalance: LARGE },
  lowVault: { frozen: false, limitRemaining: LARGE, vaultBalance: 500n },
};
const AUTHORITY_LAMPORTS = 1_000 * LAMPORTS_PER_SOL;
const GOVERNANCE_LAMPORTS = 10 * LAMPORTS_PER_SOL;

export interface WorldOptions {
  authorities: number;
  threshold: number;
  capacity: number;
  dir: string;
  signal?: AbortSignal;
}

interface WorldChain {
  rpcUrl: string;
  chainId: number;
}

interface WorldTokenPair {
  sourceMint: string;
  targetMint: string;
  /** The TokenPair PDA on the target chain. */
  address: string;
  frozen: boolean;
  /** u64 as a decimal string. */
  limitRemaining: string;
  vaultBalance: string;
}

interface WorldKey {
  publicKey: string;
  keypairPath: string;
}

/** The content of DIR/world.json. */
export interface World {
  dir: string;
  programId: string;
  source: WorldChain & { depositTracker: string };
  target: WorldChain & { withdrawTracker: string };
  threshold: number;
  capacity: number;
  authorities: WorldKey[];
  governance: WorldKey;
  tokenPairs: Record<TokenPairKind, WorldTokenPair>;
}

export async function bootstrapWorld(pair: ChainPair, options: WorldOptions): Promise<World> {
  checkWorldOptions(options);
  const signal = options.signal ?? new AbortController().signal;
  const dir = resolve(options.dir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const authorityKeys = await keypairs(dir, options.authorities);
  const governance = await ensureKeypairFile(join(dir, 'governance.json'));
  const source = devnetConnection(pair.source.url, signal);
  const target = devnetConnection(pair.target.url, signal);
  await fund(pair, { source, target }, authorityKeys, governance, signal);
  const trackers = await initializeTrackers(pair, { source, target }, governance, authorityKeys, options, signal);
  const tokenPairs = await setTokenPairs(pair.target, target, pair.source.chainId, governance, trackers.withdrawTracker, signal);
  // A server reads at finalized by default: the bridge is ready once the finalized banks have it.
  await Promise.all([
    awaitStatus(source, trackers.signatures.source, { chain: 'source', step: 'initialize_deposit_tracker', signal, commitment: 'finalized' }),
    ...tokenPairs.signatures.map((signature) =>
      awaitStatus(target, signature, { chain: 'target', step: 'set_token_pair', signal, commitment: 'finalized' }),
    ),
  ]);
  const world: World = {
    dir,
    programId: pair.source.programId.toBase58(),
    source: { rpcUrl: pair.source.url, chainId: pair.source.chainId, depositTracker: trackers.depositTracker.toBase58() },
    target: { rpcUrl: pair.target.url, chainId: pair.target.chainId, withdrawTracker: trackers.withdrawTracker.toBase58() },
    threshold: options.threshold,
    capacity: options.capacity,
    authorities: authorityKeys.map((keypair, k) => ({ publicKey: keypair.publicKey.toBase58(), keypairPath: authorityPath(dir, k) })),
    governance: { publicKey: governance.publicKey.toBase58(), keypairPath: join(dir, 'governance.json') },
    tokenPairs: tokenPairs.pairs,
  };
  await writeWorldFile(dir, world);
  return world;
}

export function worldFilePath(dir: string): string {
  return join(resolve(dir), 'world.json');
}

function checkWorldOptions(options: WorldOptions): void {
  checkInteger(options.authorities, 'authorities', 1, MAX_AUTHORITIES);
  checkInteger(options.threshold, 'threshold', 1, options.authorities);
  checkInteger(options.capacity, 'capacity', 1, maxTrackerCapacity('DepositTracker'));
  if (options.dir.length === 0) throw invalidOption('dir', 'must not be empty');
}

function authorityPath(dir: string, k: number): string {
  return join(dir, `authority-${k}.json`);
}

async function keypairs(dir: string, count: number): Promise<Keypair[]> {
  const keys: Keypair[] = [];
  for (let k = 0; k < count; k += 1) keys.push(await ensureKeypairFile(authorityPath(dir, k)));
  return keys;
}

/**
 * Authorities pay fees on both chains (ack_deposit on the target, ack_withdraw and cleanup on
 * the source). Waits until the airdrops are confirmed: the first transaction's preflight runs on
 * the confirmed bank.
 */
async function fund(
  pair: ChainPair,
  connections: { source: Connection; target: Connection },
  authorities: Keypair[],
  governance: Keypair,
  signal: AbortSignal,
): Promise<void> {
  await Promise.all(
    (['source', 'target'] as const).map((chain) => {
      const node = pair[chain];
      for (const authority of authorities) node.airdrop(authority.publicKey, AUTHORITY_LAMPORTS);
      const last = node.airdrop(governance.publicKey, GOVERNANCE_LAMPORTS);
      return awaitStatus(connections[chain], last, { chain, step: 'airdrop', signal });
    }),
  );
}

async function initializeTrackers(
  pair: ChainPair,
  connections: { source: Connection; target: Connection },
  governance: Keypair,
  authorityKeys: Keypair[],
  options: WorldOptions,
  signal: AbortSignal,
): Promise<{ depositTracker: PublicKey; withdrawTracker: PublicKey; signatures: { source: string; target: string } }> {
  const programId = pair.source.programId;
  const authorities = authorityKeys.map((keypair) => keypair.publicKey.toBase58());
  const params = { capacity: BigInt(options.capacity), threshold: options.threshold, authorities };
  const depositTracker = depositTrackerAddress(programId, pair.target.chainId);
  const withdrawTracker = withdrawTrackerAddress(pair.target.programId, pair.source.chainId);
  const initializations = [
    { chain: 'source', ix: { name: 'initialize_deposit_tracker', programId, tracker: depositTracker, targetChainId: pair.target.chainId } },
    {
      chain: 'target',
      ix: { name: 'initialize_withdraw_tracker', programId: pair.target.programId, tracker: withdrawTracker, sourceChainId: pair.source.chainId },
    },
  ] as const;
  // One per chain, both at once: each waits for its confirmation (two slots on an Agave-like devnet).
  const [source, target] = await Promise.all(
    initializations.map(({ chain, ix }) => {
      const instruction = initializeTrackerInstruction({ ...ix, governance: governance.publicKey, ...params });
      return submitTransaction(connections[chain], [instruction], [governance], { chain, step: ix.name, signal });
    }),
  );
  const signatures = { source: source!, target: target! };
  return { depositTracker, withdrawTracker, signatures };
}

async function setTokenPairs(
  target: DevnetNode,
  connection: Connection,
  sourceChainId: number,
  governance: Keypair,
  withdrawTracker: PublicKey,
  signal: AbortSignal,
): Promise<{ pairs: Record<TokenPairKind, WorldTokenPair>; signatures: string[] }> {
  // The four pairs are independent: sent at once, each confirmed in the same few slots.
  const results = await Promise.all(
    TOKEN_PAIR_KINDS.map(async (kind) => {
      const settings = TOKEN_PAIR_SETTINGS[kind];
      const sourceMint = Keypair.generate().publicKey;
      const targetMint = Keypair.generate().publicKey;
      const tokenPair = tokenPairAddress(target.programId, sourceChainId, sourceMint);
      const ix = setTokenPairInstruction({
        programId: target.programId,
        governance: governance.publicKey,
        withdrawTracker,
        tokenPair,
        sourceMint: sourceMint.toBase58(),
        targetMint: targetMint.toBase58(),
        ...settings,
      });
      const signature = await submitTransaction(connection, [ix], [governance], { chain: 'target', step: `set_token_pair (${kind})`, signal });
      const pair: WorldTokenPair = {
        sourceMint: sourceMint.toBase58(),
        targetMint: targetMint.toBase58(),
        address: tokenPair.toBase58(),
        frozen: settings.frozen,
        limitRemaining: settings.limitRemaining.toString(),
        vaultBalance: settings.vaultBalance.toString(),
      };
      return { kind, pair, signature };
    }),
  );
  const pairs = Object.fromEntries(results.map(({ kind, pair }) => [kind, pair])) as Record<TokenPairKind, WorldTokenPair>;
  const signatures = results.map(({ signature }) => signature);
  return { pairs, signatures };
}

/** Written to a temporary file and renamed, so a reader never sees half a world. */
async function writeWorldFile(dir: string, world: World): Promise<void> {
  const path = worldFilePath(dir);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(world, null, 2)}\n`, { mode: 0o644 });
  await rename(temporary, path);
}
