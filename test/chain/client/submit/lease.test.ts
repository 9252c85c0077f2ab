import { Keypair, SystemProgram, Transaction, VersionedTransaction, type PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { PriorityFeeBidder } from '../../../../src/chain/client/budget/priority-fee.js';
import { SignedSignatures } from '../../../../src/chain/client/read/signed-signatures.js';
import { createSigningLease, type ChainLeaseOptions } from '../../../../src/chain/client/submit/lease.js';
import { Broadcast } from '../../../../src/chain/client/submit/send/broadcast.js';
import { LandingRecord } from '../../../../src/chain/client/submit/send/landing-record.js';
import { advanceLeaseInstructions } from '../../../../src/chain/lease-account.js';
import type { LeaseObservation } from '../../../../src/chain/port/bridge-chains.js';
import type { ChainRpc } from '../../../../src/chain/rpc/chain-rpc.js';
import { createMetrics } from '../../../../src/metrics/metrics.js';
import { FileKeySigner } from '../../../../src/signer/file-key-signer.js';
import { captureLogs } from '../../../support/log-capture.js';

/**
 * The lease's chain client deciding on proof (docs/chain-client.md "The lease"), over a scripted
 * RPC: what each endpoint says of the lease account, what the lease's history lists, and what a
 * send and its status answer. A forged read is a doubt; two endpoints agreeing, or another
 * instance's verified transaction moving the lease from the value held, is a loss; a taking that
 * one endpoint reports confirmed counts only when two endpoints show the value it produced.
 */

const key = Keypair.generate();
const authority = key.publicKey;
const MINE = Keypair.generate().publicKey.toBase58();
const THEIRS = Keypair.generate().publicKey.toBase58();
const signal = () => AbortSignal.timeout(10_000);

function nonceAccount(value: string) {
  const data = Buffer.alloc(80);
  data.writeUInt32LE(1, 0);
  data.writeUInt32LE(1, 4);
  authority.toBuffer().copy(data, 8);
  Buffer.from(bs58.decode(value)).copy(data, 40);
  return { owner: SystemProgram.programId, lamports: 1_447_680, data };
}

interface Script {
  /** Per endpoint, the lease's value (null: free). */
  endpoints: Record<string, string | null>;
  history?: Array<{ signature: string; slot: number; err: null }>;
  transactions?: Map<string, { message: Uint8Array; signers: Array<{ key: string; signature: Uint8Array }> }>;
  /** What a status poll answers for any signature. */
  confirmed?: boolean;
}

function rpcOf(script: Script): ChainRpc {
  const view = (value: string | null) => (value === null ? null : nonceAccount(value));
  const [first] = Object.values(script.endpoints);
  return {
    chain: 'target',
    getAccountInfo: async () => ({ slot: 50, account: view(first ?? null) }),
    getAccountInfoEverywhere: async () => Object.entries(script.endpoints).map(([endpoint, value]) => ({ endpoint, slot: 50, account: view(value) })),
    getSignaturesForAddress: async () => script.history ?? [],
    getTransactionSignatures: async (signature: string) => script.transactions?.get(signature) ?? null,
    slotFloor: () => undefined,
    getProcessedSlot: async () => 50,
    getChainHeight: async () => ({ slot: 50, blockHeight: 0 }),
    getLatestBlockhash: async () => ({ blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 100 }),
    sendTransaction: async () => 'accepted',
    getSignatureStatus: async () => ({
      slot: 50,
      status: script.confirmed === true ? { slot: 49, confirmations: null, err: null, confirmationStatus: 'confirmed' } : null,
    }),
  } as unknown as ChainRpc;
}

/** The lease over `rpc`: its transactions priced at 0 (no market here), sent through the read endpoints alone. */
function leaseOver(rpc: ChainRpc, endpoints: number) {
  const metrics = createMetrics(new Registry());
  const bidder = {
    bid: async () => ({ microLamportsPerUnit: 0 }),
    landed: () => undefined,
    expired: () => undefined,
  } as unknown as PriorityFeeBidder;
  const options: ChainLeaseOptions = {
    rpc,
    signer: new FileKeySigner(key),
    sourceChainId: 7,
    signed: new SignedSignatures(),
    endpoints,
    pollIntervalMs: 1,
    bidder,
    broadcast: new Broadcast(rpc, metrics, new LandingRecord('target', metrics), undefined),
    metrics,
    logger: captureLogs().logger,
  };
  return createSigningLease(options);
}

function client(script: Script, endpoints = Object.keys(script.endpoints).length) {
  return leaseOver(rpcOf(script), endpoints);
}

/** Both endpoints read the lease held by THEIRS at first, by MINE from the second read on (at `slots`). */
function theirsThenMine(rpc: ChainRpc, slots: [number, number]): void {
  let reads = 0;
  (rpc as { getAccountInfoEverywhere: ChainRpc['getAccountInfoEverywhere'] }).getAccountInfoEverywhere = async () => {
    reads += 1;
    const value = reads === 1 ? THEIRS : MINE;
    return [
      { endpoint: 'one', slot: slots[0], account: nonceAccount(value) },
      { endpoint: 'two', slot: slots[1], account: nonceAccount(value) },
    ];
  };
}

const heldBy = (value: string): LeaseObservation => ({ state: 'held', value, lamports: 1_447_680, slot: 50 });

/** Another instance's take-over of the lease from `value`, signed by the key: its id and its signatures. */
function rivalTakeOver(value: string, mark: PublicKey = Keypair.generate().publicKey) {
  const transaction = new Transaction({ feePayer: authority, blockhash: value, lastValidBlockHeight: 0 }).add(
    ...advanceLeaseInstructions(authority, 7, mark),
  );
  transaction.sign(key);
  const parsed = VersionedTransaction.deserialize(transaction.serialize());
  const signature = bs58.encode(parsed.signatures[0]!);
  return { signature, entry: { message: parsed.message.serialize(), signers: [{ key: authority.toBase58(), signature: parsed.signatures[0]! }] } };
}

describe('the lease client: a holder stands down only on proof', () => {
  it("one endpoint forging another value, the other showing this instance's: a doubt, naming what each said", async () => {
    const outcome = await client({ endpoints: { liar: THEIRS, honest: MINE } }).check(MINE, heldBy(THEIRS), signal());
    expect(outcome.kind).toBe('doubt');
    expect(outcome.kind === 'doubt' && outcome.why).toContain(`honest: held by ${MINE}`);
  });

  it('one endpoint twice is not two: with one endpoint configured a forged read is a doubt', async () => {
    expect((await client({ endpoints: { only: THEIRS } }).check(MINE, heldBy(THEIRS), signal())).kind).toBe('doubt');
  });

  it('two endpoints agreeing on another value: lost, and the proof says so', async () => {
    const outcome = await client({ endpoints: { one: THEIRS, two: THEIRS } }).check(MINE, heldBy(THEIRS), signal());
    expect(outcome).toMatchObject({ kind: 'lost', seen: { state: 'held', value: THEIRS }, proof: expect.stringContaining('two endpoints agree') });
  });

  it("another instance's verified take-over from this instance's value in the lease's history: lost, even with one endpoint", async () => {
    const rival = rivalTakeOver(MINE);
    const script = {
      endpoints: { only: THEIRS },
      history: [{ signature: rival.signature, slot: 48, err: null }],
      transactions: new Map([[rival.signature, rival.entry]]),
    };
    expect(await client(script).check(MINE, heldBy(THEIRS), signal())).toMatchObject({
      kind: 'lost',
      proof: expect.stringContaining(rival.signature),
    });
  });

  it('a take-over from another value, or one whose signature does not verify, proves nothing', async () => {
    const other = rivalTakeOver(THEIRS);
    const forged = rivalTakeOver(MINE);
    const bad = { ...forged.entry, signers: [{ key: authority.toBase58(), signature: new Uint8Array(64) }] };
    const script = {
      endpoints: { only: THEIRS },
      history: [
        { signature: other.signature, slot: 48, err: null },
        { signature: forged.signature, slot: 47, err: null },
      ],
      transactions: new Map([
        [other.signature, other.entry],
        [forged.signature, bad],
      ]),
    };
    expect((await client(script).check(MINE, heldBy(THEIRS), signal())).kind).toBe('doubt');
  });
});

describe('the lease client: a taking counts only on proof', () => {
  it('one endpoint says free, the other holds a value: nothing is sent', async () => {
    const taking = await client({ endpoints: { liar: null, honest: THEIRS }, confirmed: true }).take(
      { state: 'free', lamports: 0, slot: 50 },
      signal(),
    );
    expect(taking).toMatchObject({ taken: false, why: expect.stringContaining('no second endpoint shows the lease free') });
  });

  it('reported confirmed, but the endpoints disagree on the value it produced: not taken', async () => {
    const script: Script = { endpoints: { liar: THEIRS, honest: THEIRS }, confirmed: true };
    const rpc = rpcOf(script);
    const everywhere = rpc.getAccountInfoEverywhere.bind(rpc);
    let reads = 0;
    // The first look (the lease as seen) agrees; every look after the landing disagrees.
    (rpc as { getAccountInfoEverywhere: ChainRpc['getAccountInfoEverywhere'] }).getAccountInfoEverywhere = async (...args) => {
      reads += 1;
      if (reads === 1) return everywhere(...args);
      return [
        { endpoint: 'liar', slot: 51, account: nonceAccount(MINE) },
        { endpoint: 'honest', slot: 51, account: nonceAccount(THEIRS) },
      ];
    };
    const lease = leaseOver(rpc, 2);
    const taking = await lease.take(heldBy(THEIRS), signal());
    expect(taking).toMatchObject({ taken: false, why: expect.stringContaining('no two endpoints show the lease held by a new value') });
  }, 10_000);

  it("reported confirmed and two endpoints show a new value, but another instance's lease transaction landed since: not taken", async () => {
    const rival = rivalTakeOver(THEIRS);
    const script: Script = {
      endpoints: { one: MINE, two: MINE },
      confirmed: true,
      history: [{ signature: rival.signature, slot: 50, err: null }],
      transactions: new Map([[rival.signature, rival.entry]]),
    };
    const rpc = rpcOf(script);
    theirsThenMine(rpc, [51, 51]);
    const lease = leaseOver(rpc, 2);
    expect(await lease.take(heldBy(THEIRS), signal())).toMatchObject({
      taken: false,
      why: expect.stringContaining(`another instance's lease transaction ${rival.signature}`),
    });
  });

  it('reported confirmed, two endpoints show a new value, no rival: taken, with that value', async () => {
    const rpc = rpcOf({ endpoints: {}, confirmed: true });
    theirsThenMine(rpc, [51, 52]);
    const lease = leaseOver(rpc, 2);
    expect(await lease.take(heldBy(THEIRS), signal())).toMatchObject({ taken: true, value: MINE, slot: 52 });
  });
});
