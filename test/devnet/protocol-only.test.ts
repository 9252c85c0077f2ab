/**
 * The "done when" script: a client that knows only @solana/web3.js and PROTOCOL.md.
 * Every instruction and account byte below is built or read by hand from PROTOCOL.md's tables;
 * the only project import starts the devnet.
 */
import { Connection, Keypair, PublicKey, Transaction, TransactionInstruction } from '@solana/web3.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startChainPair, type ChainPair } from '../../devnet/chain-pair.js';

const PROGRAM_ID = new PublicKey('BridgeProgram111111111111111111111111111111');
const S = 1;
const T = 2;

// PROTOCOL.md "Instructions": sha256("global:<name>")[0..8], as listed there.
const IX = {
  ack_deposit: '59a927a74a8affcf',
  ack_withdraw: '8b205c923efaf7e6',
  cleanup_deposit: 'cfca1f62257a91a5',
  initialize_deposit_tracker: '5cb3dbc8e59b0a28',
  initialize_withdraw_tracker: 'ac7607c1208ca476',
  deposit: 'f223c68952e1f2b6',
  withdraw: 'b712469c946da122',
  set_token_pair: '44b0e3b3e5c1e29c',
};
const DEPOSIT_TRACKER_DISCRIMINATOR = 'f7350db49ae8e1fa';
const WITHDRAW_TRACKER_DISCRIMINATOR = 'b85cdf0f4deba5d6';

// Borsh, by hand.
const u8 = (v: number) => Buffer.from([v]);
const bool = (v: boolean) => u8(v ? 1 : 0);
const u16 = (v: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v);
  return b;
};
const u32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return b;
};
const u64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b;
};
const key = (k: PublicKey) => k.toBuffer();
const data = (name: keyof typeof IX, ...args: Buffer[]) => Buffer.concat([Buffer.from(IX[name], 'hex'), ...args]);
/** DepositResult: tag u8, reason u8, 6 reserved, amount u64. */
const depositResult = (tag: number, reason: number, amount: bigint) => Buffer.concat([u8(tag), u8(reason), Buffer.alloc(6), u64(amount)]);

const pda = (...seeds: Buffer[]) => PublicKey.findProgramAddressSync(seeds, PROGRAM_ID)[0];
const depositTracker = pda(Buffer.from('deposit_tracker'), u16(T));
const withdrawTracker = pda(Buffer.from('withdraw_tracker'), u16(S));
const tokenPairOf = (mint: PublicKey) => pda(Buffer.from('token_pair'), u16(S), key(mint));

const signerMeta = (pubkey: PublicKey) => ({ pubkey, isSigner: true, isWritable: true });
const writableMeta = (pubkey: PublicKey) => ({ pubkey, isSigner: false, isWritable: true });
const readonlyMeta = (pubkey: PublicKey) => ({ pubkey, isSigner: false, isWritable: false });
const ix = (keys: TransactionInstruction['keys'], bytes: Buffer) => new TransactionInstruction({ programId: PROGRAM_ID, keys, data: bytes });

let pair: ChainPair;
let source: Connection;
let target: Connection;
const governance = Keypair.generate();
const authorities = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
const depositor = Keypair.generate();
const cranker = Keypair.generate();
const mint = Keypair.generate().publicKey;
const unknownMint = Keypair.generate().publicKey;
const recipient = Keypair.generate().publicKey;

async function send(connection: Connection, instructions: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: signers[0]!.publicKey, blockhash, lastValidBlockHeight }).add(...instructions);
  tx.sign(...signers);
  const signature = await connection.sendRawTransaction(tx.serialize());
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const status = (await connection.getSignatureStatuses([signature])).value[0];
    if (status) {
      expect(status.err).toBeNull();
      return signature;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`transaction ${signature} did not land`);
}

async function fund(connection: Connection, who: PublicKey): Promise<void> {
  const signature = await connection.requestAirdrop(who, 10_000_000_000);
  expect((await connection.getSignatureStatuses([signature])).value[0]?.err).toBeNull();
}

async function read(connection: Connection, account: PublicKey, offset: number, length: number): Promise<Buffer> {
  const info = await connection.getAccountInfo(account, { dataSlice: { offset, length }, commitment: 'finalized' });
  if (info === null) throw new Error(`account ${account.toBase58()} missing`);
  return info.data;
}

/** Header fields at PROTOCOL.md's offsets. */
async function header(connection: Connection, tracker: PublicKey) {
  const h = await read(connection, tracker, 0, 848);
  return {
    discriminator: h.subarray(0, 8).toString('hex'),
    sourceChainId: h.readUInt16LE(8),
    targetChainId: h.readUInt16LE(10),
    threshold: h[12],
    authorityCount: h[13],
    entryCount: h.readBigUInt64LE(16),
    capacity: h.readBigUInt64LE(24),
    settledPrefix: h.readBigUInt64LE(32),
    nextIndex: (k: number) => h.readBigUInt64LE(592 + 16 * k),
    lastVote: (k: number) => h[592 + 16 * k + 8],
  };
}

async function depositEntry(i: number) {
  const e = await read(source, depositTracker, 848 + i * 160, 160);
  return {
    amount: e.readBigUInt64LE(0),
    depositor: new PublicKey(e.subarray(8, 40)),
    recipient: new PublicKey(e.subarray(40, 72)),
    sourceMint: new PublicKey(e.subarray(72, 104)),
    status: e[104],
    cleanupCompleted: e[105],
    yesVotes: e.readUInt16LE(106),
    result: { tag: e[128], reason: e[129], amount: e.readBigUInt64LE(136) },
    refundedAmount: e.readBigUInt64LE(144),
  };
}

async function withdrawEntry(i: number) {
  const e = await read(target, withdrawTracker, 848 + i * 144, 144);
  return {
    status: e[0],
    createdTokenAccount: e[1],
    yesVotes: e.readUInt16LE(2),
    amount: e.readBigUInt64LE(8),
    result: { tag: e[80], reason: e[81], amount: e.readBigUInt64LE(88) },
    tokenAccount: new PublicKey(e.subarray(96, 128)),
  };
}

const ackDeposit = (authority: Keypair, index: bigint, approve: boolean, amount: bigint, sourceMint: PublicKey) =>
  ix(
    [signerMeta(authority.publicKey), writableMeta(withdrawTracker), readonlyMeta(tokenPairOf(sourceMint))],
    data('ack_deposit', u64(index), bool(approve), u64(amount), key(recipient), key(sourceMint)),
  );
const ackWithdraw = (authority: Keypair, index: bigint, result: Buffer) =>
  ix([signerMeta(authority.publicKey), writableMeta(depositTracker)], data('ack_withdraw', u64(index), bool(true), result));

beforeAll(async () => {
  pair = await startChainPair({ slotIntervalMs: 0 });
  source = new Connection(pair.source.url, 'confirmed');
  target = new Connection(pair.target.url, 'confirmed');
  for (const connection of [source, target]) {
    for (const who of [governance, depositor, cranker, ...authorities]) await fund(connection, who.publicKey);
  }
});

afterAll(async () => {
  await pair.close();
});

it('deposits, reads the trackers, votes, finalizes, claims and cleans up with PROTOCOL.md bytes only', async () => {
  const keys = Buffer.concat([u32(3), ...authorities.map((a) => key(a.publicKey))]);
  await send(
    source,
    [ix([signerMeta(governance.publicKey), writableMeta(depositTracker)], data('initialize_deposit_tracker', u16(T), u64(8n), u8(2), keys))],
    [governance],
  );
  await send(
    target,
    [ix([signerMeta(governance.publicKey), writableMeta(withdrawTracker)], data('initialize_withdraw_tracker', u16(S), u64(8n), u8(2), keys))],
    [governance],
  );
  const setPair = data('set_token_pair', key(mint), key(Keypair.generate().publicKey), bool(false), u64(600n), u64(10_000n));
  await send(target, [ix([signerMeta(governance.publicKey), writableMeta(withdrawTracker), writableMeta(tokenPairOf(mint))], setPair)], [governance]);

  const sourceHeader = await header(source, depositTracker);
  expect(sourceHeader).toMatchObject({
    discriminator: DEPOSIT_TRACKER_DISCRIMINATOR,
    sourceChainId: S,
    targetChainId: T,
    threshold: 2,
    authorityCount: 3,
    capacity: 8n,
  });
  expect((await header(target, withdrawTracker)).discriminator).toBe(WITHDRAW_TRACKER_DISCRIMINATOR);

  // Two deposits: one the pair can only partly confirm (limit 600), one for a mint without a pair.
  const depositIx = (amount: bigint, sourceMint: PublicKey) =>
    ix([signerMeta(depositor.publicKey), writableMeta(depositTracker)], data('deposit', u64(amount), key(recipient), key(sourceMint)));
  await send(source, [depositIx(1_000n, mint)], [depositor]);
  await send(source, [depositIx(250n, unknownMint)], [depositor]);
  expect((await header(source, depositTracker)).entryCount).toBe(2n);
  expect(await depositEntry(0)).toMatchObject({ amount: 1_000n, status: 0, cleanupCompleted: 0 });
  expect((await depositEntry(0)).depositor.equals(depositor.publicKey)).toBe(true);

  // ack_deposit: authority 0 proposes both in one transaction; authority 1 approves both.
  await send(
    target,
    [ackDeposit(authorities[0]!, 0n, true, 1_000n, mint), ackDeposit(authorities[0]!, 1n, true, 250n, unknownMint)],
    [authorities[0]!],
  );
  expect((await withdrawEntry(0)).status).toBe(1);
  await send(
    target,
    [ackDeposit(authorities[1]!, 0n, true, 1_000n, mint), ackDeposit(authorities[1]!, 1n, true, 250n, unknownMint)],
    [authorities[1]!],
  );
  const confirmed = await withdrawEntry(0);
  expect(confirmed).toMatchObject({ status: 2, createdTokenAccount: 0, yesVotes: 0b011, result: { tag: 1, reason: 0, amount: 600n } });
  expect(await withdrawEntry(1)).toMatchObject({ status: 2, createdTokenAccount: 2, result: { tag: 2, reason: 4, amount: 0n } });
  expect((await header(target, withdrawTracker)).settledPrefix).toBe(2n);

  // A vote out of order is refused in preflight with Custom 6001 (VoteOutOfOrder).
  const outOfOrder = await send(target, [ackDeposit(authorities[2]!, 1n, true, 250n, unknownMint)], [authorities[2]!]).catch((err: unknown) => err);
  expect(String(outOfOrder)).toContain('custom program error: 0x1771');

  // The user claims the Confirmed withdrawal: created_token_account becomes Created.
  const tokenAccount = Keypair.generate().publicKey;
  await send(
    target,
    [ix([signerMeta(depositor.publicKey), writableMeta(withdrawTracker), readonlyMeta(tokenAccount)], data('withdraw', u64(0n)))],
    [depositor],
  );
  const claimed = await withdrawEntry(0);
  expect(claimed.createdTokenAccount).toBe(1);
  expect(claimed.tokenAccount.equals(tokenAccount)).toBe(true);

  // ack_withdraw relays both results to the source; threshold 2 finalizes.
  const partial = depositResult(1, 0, 600n);
  const notFound = depositResult(2, 4, 0n);
  await send(source, [ackWithdraw(authorities[0]!, 0n, partial), ackWithdraw(authorities[0]!, 1n, notFound)], [authorities[0]!]);
  expect((await depositEntry(0)).status).toBe(1);
  await send(source, [ackWithdraw(authorities[1]!, 0n, partial), ackWithdraw(authorities[1]!, 1n, notFound)], [authorities[1]!]);
  expect(await depositEntry(0)).toMatchObject({ status: 2, result: { tag: 1, reason: 0, amount: 600n } });
  expect(await depositEntry(1)).toMatchObject({ status: 2, result: { tag: 2, reason: 4, amount: 0n } });
  const votes = await header(source, depositTracker);
  expect([votes.nextIndex(0), votes.nextIndex(1), votes.nextIndex(2)]).toEqual([2n, 2n, 0n]);
  expect(votes.lastVote(0)).toBe(1);

  // cleanup_deposit, by anyone: refunds 400 (partial) and 250 (rejected); settled_prefix moves to 2.
  const cleanup = (index: bigint) =>
    ix([signerMeta(cranker.publicKey), writableMeta(depositTracker), writableMeta(depositor.publicKey)], data('cleanup_deposit', u64(index)));
  await send(source, [cleanup(0n), cleanup(1n)], [cranker]);
  expect(await depositEntry(0)).toMatchObject({ cleanupCompleted: 1, refundedAmount: 400n });
  expect(await depositEntry(1)).toMatchObject({ cleanupCompleted: 1, refundedAmount: 250n });
  expect((await header(source, depositTracker)).settledPrefix).toBe(2n);
});
