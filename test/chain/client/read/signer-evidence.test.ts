import { Keypair, SystemProgram, SYSVAR_RECENT_BLOCKHASHES_PUBKEY, Transaction, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { createHash, randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { MOVE_PROOF_READS, MoveProofs } from '../../../../src/chain/client/nonce/move-proofs.js';
import {
  MAX_RECENT_VALUES,
  messageFacts,
  poolAddressSet,
  recentBlockhashes,
  RecentValues,
} from '../../../../src/chain/client/read/signer-evidence.js';
import { durableNonceOf } from '../../../../src/chain/codec/nonce-state.js';
import { advanceNonceInstruction, nonceAddress } from '../../../../src/chain/nonce-account.js';
import type { ChainRpc } from '../../../../src/chain/rpc/chain-rpc.js';
import { createMetrics } from '../../../../src/metrics/metrics.js';
import { captureLogs } from '../../../support/log-capture.js';
import { metricValue } from '../../../support/metric-value.js';

/** What makes a transaction of the key proof of a second signer (docs/chain-client.md, "Who signs: proof, not reports"). */

const authority = Keypair.generate();
const CHAIN_ID = 7;
const pool = poolAddressSet(authority.publicKey, CHAIN_ID, 8);

function message(instructions: TransactionInstruction[], blockhash = bs58.encode(randomBytes(32))): Uint8Array {
  return new Transaction({ feePayer: authority.publicKey, blockhash, lastValidBlockHeight: 0 }).add(...instructions).serializeMessage();
}

describe('the RecentBlockhashes sysvar and the values seen', () => {
  it('every blockhash the sysvar lists, and the durable nonce value a nonce advanced in its block holds, is seen; a forged value is not', async () => {
    const hashes = [randomBytes(32), randomBytes(32)];
    const data = Buffer.alloc(8 + 150 * 40);
    data.writeBigUInt64LE(2n, 0);
    for (const [i, hash] of hashes.entries()) hash.copy(data, 8 + i * 40);
    const rpc = {
      getAccountInfo: async () => ({ slot: 1, account: { owner: SYSVAR_RECENT_BLOCKHASHES_PUBKEY, lamports: 1, data } }),
    } as unknown as ChainRpc;
    const recent = new RecentValues();
    await recent.readRecentBlockhashes(rpc, new AbortController().signal);
    const blockhash = bs58.encode(hashes[1]!);
    // Agave's DurableNonce::from_blockhash, computed here from its definition.
    const nonce = bs58.encode(createHash('sha256').update('DURABLE_NONCE').update(hashes[1]!).digest());
    expect(durableNonceOf(blockhash)).toBe(nonce);
    expect([recent.has(blockhash), recent.has(nonce), recent.has(bs58.encode(randomBytes(32)))]).toEqual([true, true, false]);
  });

  it("decodes the sysvar's count and 40-byte entries; anything else lists nothing", () => {
    const hashes = [randomBytes(32), randomBytes(32)];
    const data = Buffer.alloc(8 + 150 * 40);
    data.writeBigUInt64LE(2n, 0);
    for (const [i, hash] of hashes.entries()) hash.copy(data, 8 + i * 40);
    expect(recentBlockhashes(data)).toEqual(hashes.map((hash) => bs58.encode(hash)));
    data.writeBigUInt64LE(151n, 0);
    expect(recentBlockhashes(data)).toEqual([]);
    expect(recentBlockhashes(data.subarray(0, 4))).toEqual([]);
    expect(recentBlockhashes(undefined)).toEqual([]);
  });

  it(`remembers at most ${MAX_RECENT_VALUES} values, the oldest forgotten first`, () => {
    const recent = new RecentValues();
    for (let i = 0; i <= MAX_RECENT_VALUES; i++) recent.saw(String(i));
    expect(recent.has('0')).toBe(false);
    expect(recent.has('1')).toBe(true);
    expect(recent.has(String(MAX_RECENT_VALUES))).toBe(true);
  });
});

describe('messageFacts', () => {
  it('a durable-nonce transaction: the account its first instruction advances and the value it was signed against', () => {
    const lane = nonceAddress(authority.publicKey, CHAIN_ID, 0);
    const value = bs58.encode(randomBytes(32));
    const facts = messageFacts(
      message(
        [
          advanceNonceInstruction(lane, authority.publicKey),
          SystemProgram.transfer({ fromPubkey: authority.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }),
        ],
        value,
      ),
      pool,
    );
    expect(facts).toEqual({ blockhash: value, advances: lane.toBase58(), poolSetup: false });
  });

  it("the operator's work on its own pool (create, fund, initialize, withdraw, authorize) and nothing else is pool setup; one instruction elsewhere is not", () => {
    const address = nonceAddress(authority.publicKey, CHAIN_ID, 3);
    const key = authority.publicKey;
    const setUp = [
      SystemProgram.transfer({ fromPubkey: key, toPubkey: address, lamports: 5 }),
      SystemProgram.nonceInitialize({ noncePubkey: address, authorizedPubkey: key }),
      SystemProgram.nonceWithdraw({ noncePubkey: address, authorizedPubkey: key, toPubkey: key, lamports: 1 }),
      SystemProgram.nonceAuthorize({ noncePubkey: address, authorizedPubkey: key, newAuthorizedPubkey: Keypair.generate().publicKey }),
    ];
    expect(messageFacts(message(setUp), pool)?.poolSetup).toBe(true);
    expect(
      messageFacts(message([...setUp, SystemProgram.transfer({ fromPubkey: key, toPubkey: Keypair.generate().publicKey, lamports: 1 })]), pool)
        ?.poolSetup,
    ).toBe(false);
    expect(
      messageFacts(message([SystemProgram.nonceInitialize({ noncePubkey: nonceAddress(key, CHAIN_ID + 1, 0), authorizedPubkey: key })]), pool)
        ?.poolSetup,
    ).toBe(false);
    // Advancing a pool nonce is the crank's work (a vote's first instruction), never the operator's.
    expect(messageFacts(message([advanceNonceInstruction(address, key)]), pool)?.poolSetup).toBe(false);
    expect(messageFacts(Uint8Array.from([1, 2, 3]), pool)).toBeUndefined();
  });
});

/** A nonce account of `authority` holding `value`, as a node answers it. */
function nonceAccount(value: string): { owner: typeof SystemProgram.programId; lamports: number; data: Uint8Array } {
  const data = Buffer.alloc(80);
  data.writeUInt32LE(1, 0);
  data.writeUInt32LE(1, 4);
  authority.publicKey.toBuffer().copy(data, 8);
  Buffer.from(bs58.decode(value)).copy(data, 40);
  return { owner: SystemProgram.programId, lamports: 1, data };
}

describe('MoveProofs', () => {
  const lane = nonceAddress(authority.publicKey, CHAIN_ID, 0).toBase58();
  const value = () => bs58.encode(randomBytes(32));
  const [A, B, C, D, E, F] = Array.from({ length: 6 }, value);
  const move = { account: lane, from: A!, to: B!, slot: 20 };
  const signal = () => AbortSignal.timeout(5_000);
  /** What each endpoint holds of the lane now. */
  let held: string[] = [];
  const proofs = () => {
    const metrics = createMetrics(new Registry());
    const logs = captureLogs('info');
    held = [];
    const rpc = {
      chain: 'target',
      getAccountInfoEverywhere: async () => held.map((one, i) => ({ endpoint: `e${i}`, slot: 30, account: nonceAccount(one) })),
    } as unknown as ChainRpc;
    return { proofs: new MoveProofs({ rpc, authority: authority.publicKey, metrics, logger: logs.logger }), metrics, logs };
  };

  it('a move with the verified transaction that made it: that transaction carries it, and it is no doubt', async () => {
    const { proofs: judge, metrics } = proofs();
    const transaction = { signature: 'S', slot: 20, signedHere: false, advanced: { account: lane, from: A! } };
    expect(await judge.judge([move], [transaction], signal())).toEqual({
      transactions: [{ signature: 'S', slot: 20, signedHere: false, nonceMove: move }],
      nonceMoves: [],
    });
    for (let read = 0; read < MOVE_PROOF_READS; read++) await judge.judge([], [], signal());
    expect(await metricValue(metrics.signerEvidenceUnverified, { chain: 'target' })).toBe(0);
  });

  it('a move whose transaction a later read lists, or an earlier one listed, is proven; one without, after the reads it waits, is a doubt', async () => {
    const { proofs: judge, metrics, logs } = proofs();
    const transaction = { signature: 'S', slot: 20, signedHere: false, advanced: { account: lane, from: A! } };
    await judge.judge([move], [], signal());
    expect((await judge.judge([], [transaction], signal())).transactions).toEqual([{ signature: 'S', slot: 20, signedHere: false, nonceMove: move }]);
    await judge.judge([], [{ ...transaction, signature: 'T', advanced: { account: lane, from: C! } }], signal());
    await judge.judge([{ ...move, from: C!, to: D! }], [], signal());
    const unproven = { ...move, from: E!, to: F! };
    expect(await judge.judge([unproven], [], signal())).toEqual({ transactions: [], nonceMoves: [] });
    for (let read = 1; read < MOVE_PROOF_READS; read++) await judge.judge([], [], signal());
    expect(await metricValue(metrics.signerEvidenceUnverified, { chain: 'target' })).toBe(1);
    expect(logs.records()).toContainEqual(expect.objectContaining({ level: 'warn', moves: [unproven] }));
  });

  it('without history: a move from a value two endpoints held to one two endpoints hold is proven; a value only one endpoint shows never is, nor what follows it', async () => {
    const { proofs: judge, metrics } = proofs();
    // Two endpoints hold B after the move A -> B: B is held, A never was: a doubt.
    held = [B!, B!];
    expect(await judge.judge([move], [], signal())).toEqual({ transactions: [], nonceMoves: [] });
    // B -> C, both held: proven, reported once; its transaction listed later is not reported again.
    held = [C!, C!];
    const second = { account: lane, from: B!, to: C!, slot: 25 };
    expect(await judge.judge([second], [], signal())).toEqual({ transactions: [], nonceMoves: [second] });
    expect(
      (await judge.judge([], [{ signature: 'S', slot: 25, signedHere: false, advanced: { account: lane, from: B! } }], signal())).transactions,
    ).toEqual([]);
    // One endpoint shows a forged D, the other the real C: C -> D is not held; D -> C neither (D never held).
    held = [D!, C!];
    expect(await judge.judge([{ account: lane, from: C!, to: D!, slot: 30 }], [], signal())).toEqual({ transactions: [], nonceMoves: [] });
    held = [C!, C!];
    expect(await judge.judge([{ account: lane, from: D!, to: C!, slot: 31 }], [], signal())).toEqual({ transactions: [], nonceMoves: [] });
    for (let read = 0; read < MOVE_PROOF_READS; read++) await judge.judge([], [], signal());
    expect(await metricValue(metrics.signerEvidenceUnverified, { chain: 'target' })).toBe(3);
  });
});
