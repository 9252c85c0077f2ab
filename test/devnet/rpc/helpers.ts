import { createHash } from 'node:crypto';
import { Connection, Keypair, NONCE_ACCOUNT_LENGTH, PublicKey, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import bs58 from 'bs58';
import { depositInstruction, initializeTrackerInstruction } from '../../../devnet/instructions.js';
import { depositTrackerAddress } from '../../../src/chain/pda.js';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';

/**
 * The node a test file's tests run on: one for the whole file (`file`), or a fresh one for each
 * test (`each`); slots pass only with transactions and advanceSlots. Read `node` and
 * `connection` inside the tests.
 */
export function testNode(scope: 'file' | 'each'): { readonly node: DevnetNode; readonly connection: Connection } {
  const shared: { node?: DevnetNode; connection?: Connection } = {};
  const [start, stop] = scope === 'file' ? [beforeAll, afterAll] : [beforeEach, afterEach];
  start(async () => {
    shared.node = await startDevnetNode({ name: 'source', chainId: 1, slotIntervalMs: 0 });
    shared.connection = new Connection(shared.node.url, 'confirmed');
  });
  stop(async () => {
    await shared.node?.close();
  });
  return {
    get node() {
      return shared.node ?? failNotStarted();
    },
    get connection() {
      return shared.connection ?? failNotStarted();
    },
  };
}

function failNotStarted(): never {
  throw new Error('testNode: the node is read outside a test (it starts before each test or the file)');
}

/** Raw JSON-RPC over fetch, to check exact wire shapes. */
// biome-ignore lint/suspicious/noExplicitAny: a raw wire body; each test reads and asserts the fields it names
export async function rpc(url: string, method: string, params?: unknown[]): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Plain-text bodies (HTTP 500) stay text.
  }
  return { status: res.status, body, headers: res.headers };
}

/** A fresh keypair the node has airdropped `lamports` to. */
export function fundedKeypair(node: DevnetNode, lamports = 1_000_000_000): Keypair {
  const keypair = Keypair.generate();
  node.airdrop(keypair.publicKey, lamports);
  return keypair;
}

/** sendTransaction with signed bytes, base64 as a node takes them. */
export function sendWire(url: string, wire: Buffer, skipPreflight = false) {
  return rpc(url, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64', skipPreflight }]);
}

/** Signs `instructions` with `payer` over a fresh blockhash and sends them; the JSON-RPC body. */
export async function send(node: DevnetNode, connection: Connection, instructions: TransactionInstruction[], payer: Keypair, skipPreflight = false) {
  return (await sendWire(node.url, await signedWire(connection, instructions, [payer]), skipPreflight)).body;
}

/** A funded payer and an initialized DepositTracker (the node plays the source chain, target chain 2). */
export async function depositSetup(node: DevnetNode, connection: Connection) {
  const payer = Keypair.generate();
  node.airdrop(payer.publicKey, 10_000_000_000);
  const tracker = depositTrackerAddress(node.programId, 2);
  const init = initializeTrackerInstruction({
    name: 'initialize_deposit_tracker',
    programId: node.programId,
    governance: payer.publicKey,
    tracker,
    targetChainId: 2,
    capacity: 16n,
    threshold: 1,
    authorities: [Keypair.generate().publicKey.toBase58()],
  });
  await connection.sendRawTransaction(await signedWire(connection, [init], [payer]));
  const deposit = (amount: bigint, depositor = payer): TransactionInstruction =>
    depositInstruction({
      programId: node.programId,
      depositor: depositor.publicKey,
      depositTracker: tracker,
      amount,
      recipient: Keypair.generate().publicKey.toBase58(),
      sourceMint: Keypair.generate().publicKey.toBase58(),
    });
  return { payer, tracker, deposit };
}

export async function signedWire(
  connection: Connection,
  instructions: TransactionInstruction[],
  signers: Keypair[],
  blockhash?: string,
): Promise<Buffer> {
  const recentBlockhash = blockhash ?? (await connection.getLatestBlockhash()).blockhash;
  const tx = new Transaction({ feePayer: signers[0]!.publicKey, recentBlockhash }).add(...instructions);
  tx.sign(...signers);
  return tx.serialize();
}

/** PROTOCOL.md "Durable nonces": sha256("DURABLE_NONCE" || blockhash), computed here apart from the devnet's own. */
export const durableNonceOf = (blockhash: string): string =>
  bs58.encode(createHash('sha256').update('DURABLE_NONCE').update(bs58.decode(blockhash)).digest());

export const randomKey = (): PublicKey => Keypair.generate().publicKey;

/**
 * A nonce account at the address derived from `authority` with `seed`: the two instructions that
 * create it with `lamports` and initialize it, authorized to `authority`.
 */
export async function seededNonceAccount(
  authority: PublicKey,
  seed: string,
  lamports: number,
): Promise<{ address: PublicKey; instructions: TransactionInstruction[] }> {
  const address = await PublicKey.createWithSeed(authority, seed, SystemProgram.programId);
  const create = SystemProgram.createAccountWithSeed({
    fromPubkey: authority,
    basePubkey: authority,
    seed,
    newAccountPubkey: address,
    lamports,
    space: NONCE_ACCOUNT_LENGTH,
    programId: SystemProgram.programId,
  });
  return { address, instructions: [create, SystemProgram.nonceInitialize({ noncePubkey: address, authorizedPubkey: authority })] };
}
