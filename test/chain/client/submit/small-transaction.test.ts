import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { PriorityFeeBidder } from '../../../../src/chain/client/budget/priority-fee.js';
import { SignedSignatures } from '../../../../src/chain/client/read/signed-signatures.js';
import { Broadcast } from '../../../../src/chain/client/submit/send/broadcast.js';
import { LandingRecord } from '../../../../src/chain/client/submit/send/landing-record.js';
import { submitSmallTransaction, type SmallTransactionContext } from '../../../../src/chain/client/submit/small-transaction.js';
import { DEFAULT_PROGRAM_ID } from '../../../../src/chain/codec/layout.js';
import { createChainRpc } from '../../../../src/chain/rpc/chain-rpc.js';
import { SendPaths } from '../../../../src/chain/rpc/send-paths.js';
import { createMetrics } from '../../../../src/metrics/metrics.js';
import { FileKeySigner } from '../../../../src/signer/file-key-signer.js';
import { captureLogs } from '../../../support/log-capture.js';
import { startJsonRpcServer, type JsonRpcTestServer } from '../../rpc/json-rpc-test-server.js';
import { FakeChain } from '../fake-chain.js';
import { waitFor } from '../../../support/wait-for.js';
import { trackerHeader } from '../bridge-fixture.js';

/**
 * A small transaction that is not a crank action (the lease's steps), landed on every
 * transaction's terms (docs/chain-client.md, "Small transactions"): bid from the market, re-sent
 * within its lifetime, through the send-only paths, landed only when confirmed.
 */

const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((one) => one.close()));
});

const authority = Keypair.fromSeed(new Uint8Array(32).fill(41));
const signal = () => new AbortController().signal;
const priceOf = (wire: string) => {
  const price = Transaction.from(Buffer.from(wire, 'base64')).instructions.find(
    (ix) => ix.programId.equals(ComputeBudgetProgram.programId) && ix.data[0] === 3,
  );
  return price === undefined ? undefined : Number(Buffer.from(price.data).readBigUInt64LE(1));
};

async function setUp(): Promise<{ chain: FakeChain; path: JsonRpcTestServer; ctx: SmallTransactionContext }> {
  const chain = await new FakeChain(new PublicKey(DEFAULT_PROGRAM_ID), Keypair.generate().publicKey, {
    header: trackerHeader('WithdrawTracker', { entryCount: 0, ownNext: 0 }),
    entries: [],
  }).start();
  const path = await startJsonRpcServer(() => ({ result: 'accepted' }));
  closing.push(chain, path);
  const metrics = createMetrics(new Registry());
  const { logger } = captureLogs('debug');
  const rpc = createChainRpc({ chain: 'target', url: chain.url, timeoutMs: 2_000, metrics });
  const paths = new SendPaths({ chain: 'target', urls: [path.url], timeoutMs: 2_000, metrics, logger });
  const broadcast = new Broadcast(rpc, metrics, new LandingRecord('target', metrics), paths);
  const bidder = new PriorityFeeBidder({
    rpc,
    bounds: { minMicroLamports: 0, maxMicroLamports: 100_000 },
    metrics,
    landing: broadcast.record,
    authority: authority.publicKey,
    logger,
  });
  const timing = { pollIntervalMs: 10, rebroadcastIntervalMs: 40, confirmTimeoutMs: 3_000 };
  return {
    chain,
    path,
    ctx: { rpc, signer: new FileKeySigner(authority), bidder, broadcast, signed: new SignedSignatures(), timing, metrics, logger },
  };
}

const transfer = () => ({
  instructions: [SystemProgram.transfer({ fromPubkey: authority.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 })],
  unitLimit: 1_000,
});

describe('submitSmallTransaction', () => {
  it('bids what the market clears, goes to the send-only path too, and lands once confirmed', async () => {
    const { chain, path, ctx } = await setUp();
    chain.recentFees = Array.from({ length: 150 }, (_, i) => ({ slot: 1_000 + i, prioritizationFee: 5_000 }));
    const outcome = await submitSmallTransaction(ctx, transfer(), signal());
    expect(outcome).toMatchObject({ kind: 'landed', signature: chain.landed[0] });
    expect(priceOf(chain.sends[0]!.wire)).toBe(5_000);
    await waitFor(() => path.calls.some((call) => call.params[0] === chain.sends[0]!.wire), {
      timeoutMs: 2_000,
      what: 'the send-only path to receive the bytes',
    });
  });

  it('a send no leader took is re-sent, the same bytes, until it lands: once', async () => {
    const { chain, ctx } = await setUp();
    chain.onSend = (send) => (send.count < 3 ? 'ignore' : 'none');
    const outcome = await submitSmallTransaction(ctx, transfer(), signal());
    expect(outcome.kind).toBe('landed');
    expect(new Set(chain.sends.map((send) => send.wire)).size).toBe(1);
    expect(chain.sends.length).toBeGreaterThanOrEqual(3);
    expect(chain.landed).toHaveLength(1);
  });

  it('seen processed on a fork that is abandoned: in flight, not landed; the rebroadcast lands it', async () => {
    const { chain, ctx } = await setUp();
    chain.forkLandings = 1;
    const outcome = await submitSmallTransaction(ctx, transfer(), signal());
    expect(outcome.kind).toBe('landed');
    expect(chain.forked.size).toBe(0);
    expect(chain.landed).toHaveLength(1);
  });

  it("against a durable value: the caller's instructions lead (AdvanceNonceAccount must be first), the budget follows, the value is the blockhash", async () => {
    const { chain, ctx } = await setUp();
    const nonce = Keypair.generate().publicKey;
    const value = Keypair.generate().publicKey.toBase58();
    const advance = SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: authority.publicKey });
    await submitSmallTransaction(ctx, { instructions: [advance], unitLimit: 1_000, durableValue: value }, signal());
    const sent = Transaction.from(Buffer.from(chain.sends[0]!.wire, 'base64'));
    expect(sent.recentBlockhash).toBe(value);
    expect(sent.instructions[0]!.programId.equals(SystemProgram.programId)).toBe(true);
    expect(sent.instructions.slice(1).every((ix) => ix.programId.equals(ComputeBudgetProgram.programId))).toBe(true);
  });

  it('every send refused with HTTP 500: not landed at its expiry, the reason names the failures, and the next bid is no higher', async () => {
    const { chain, ctx } = await setUp();
    chain.override = (call) => (call.method === 'sendTransaction' ? { http: 500 } : undefined);
    chain.blocksPerHeightCall = 40;
    const outcome = await submitSmallTransaction(ctx, transfer(), signal());
    expect(outcome.kind).toBe('not_landed');
    expect('reason' in outcome && outcome.reason).toMatch(/sendTransaction on the destination chain failed every time \(\d+ sends; last: .*HTTP 500/);
    chain.override = undefined;
    await submitSmallTransaction(ctx, transfer(), signal());
    expect(chain.sends.map((send) => priceOf(send.wire))).toEqual([0]);
  });
});
