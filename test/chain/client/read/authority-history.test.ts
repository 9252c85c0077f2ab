import { randomBytes } from 'node:crypto';
import { ComputeBudgetProgram, Keypair, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthorityHistory,
  HISTORY_LOOKUP_CONCURRENCY,
  HISTORY_MAX_LOOKUPS,
  HISTORY_MAX_PAGES,
  HISTORY_PAGE_LIMIT,
} from '../../../../src/chain/client/read/authority-history.js';
import { MAX_SIGNED_KEPT, SignedSignatures } from '../../../../src/chain/client/read/signed-signatures.js';
import { poolAddressSet, RecentValues } from '../../../../src/chain/client/read/signer-evidence.js';
import { createChainRpc } from '../../../../src/chain/rpc/chain-rpc.js';
import { createMetrics, type Metrics } from '../../../../src/metrics/metrics.js';
import { nonceAddress, nonceSeed } from '../../../../src/chain/nonce-account.js';
import { captureLogs, type CapturedLogs } from '../../../support/log-capture.js';
import { metricValue } from '../../../support/metric-value.js';
import { NO_HISTORY_REPLY, startJsonRpcServer, type JsonRpcTestServer, type Reply, type RpcCall } from '../../rpc/json-rpc-test-server.js';

/**
 * AuthorityHistory against a scripted node: the key's history (newest first) answered with
 * getSignaturesForAddress's `limit`, `before` and `until`, and getTransaction's signers.
 */

const authority = Keypair.generate();
const other = Keypair.generate();
const CHAIN_ID = 2;
/** The blockhashes this process saw (the RecentBlockhashes sysvar's, in production): every transaction landed here uses one, unless `replayed`. */
let recent = new RecentValues();

interface Entry {
  signature: string;
  slot: number;
  /** The transaction getTransaction answers for it. */
  wire: string;
}

/**
 * `authority`: the key signed it; `funder`: it lists the key without its signature; `forged`:
 * the key "signed" it with random bytes; `own`: this process signed it (the test adds it to the
 * signed set, so it is never fetched).
 */
type Kind = 'authority' | 'funder' | 'forged' | 'own' | 'replayed';

class ScriptedHistory {
  /** Newest first. */
  entries: Entry[] = [];
  failGetTransaction = false;
  /** Answer as a node that does not know `until` (lagging or pruned): it bounds nothing. */
  forgetsUntil = false;
  /** Answer every history read with -32011, as a node without history. */
  noHistory = false;
  private slot = 100;

  land(count: number, kind: Kind = 'authority'): Entry[] {
    const landed = Array.from({ length: count }, () => ({ ...transactionOf(kind), slot: (this.slot += 1) }));
    this.entries.unshift(...[...landed].reverse());
    return landed;
  }

  readonly answer = (call: RpcCall): Reply => {
    if (this.noHistory) return NO_HISTORY_REPLY;
    if (call.method === 'getSignaturesForAddress') {
      const { limit, before, until } = call.params[1] as { limit: number; before?: string; until?: string };
      const start = before === undefined ? 0 : this.entries.findIndex((e) => e.signature === before) + 1;
      const end = until === undefined || this.forgetsUntil ? this.entries.length : this.entries.findIndex((e) => e.signature === until);
      const page = this.entries.slice(start, end).slice(0, limit);
      return {
        result: page.map(({ signature, slot }) => ({ signature, slot, err: null, memo: null, blockTime: 1, confirmationStatus: 'finalized' })),
      };
    }
    if (call.method === 'getTransaction') {
      if (this.failGetTransaction) return { http: 503 };
      const entry = this.entries.find((e) => e.signature === call.params[0]);
      if (entry === undefined) return { result: null };
      return { result: { slot: entry.slot, transaction: [entry.wire, 'base64'], meta: { err: null } } };
    }
    return { error: { code: -32601, message: `Method not found: ${call.method}` } };
  };
}

/** A transaction the authority signs, one a funder signs that lists the authority as a plain account, or a forgery in the authority's name. */
function transactionOf(kind: Kind): { signature: string; wire: string } {
  if (kind === 'own') return { signature: bs58.encode(randomBytes(64)), wire: '' };
  const payer = kind === 'funder' ? other : authority;
  const instruction = ComputeBudgetProgram.setComputeUnitLimit({ units: 1000 });
  instruction.keys.push({ pubkey: authority.publicKey, isSigner: false, isWritable: true });
  return signedWith(payer, [instruction], kind);
}

function signedWith(payer: Keypair, instructions: TransactionInstruction[], kind: Kind): { signature: string; wire: string } {
  const blockhash = bs58.encode(randomBytes(32));
  if (kind !== 'replayed') recent.saw(blockhash);
  const transaction = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight: 0 }).add(...instructions);
  if (kind === 'forged') transaction.addSignature(authority.publicKey, randomBytes(64));
  else transaction.sign(payer);
  return { signature: bs58.encode(transaction.signature!), wire: transaction.serialize({ verifySignatures: false }).toString('base64') };
}

let server: JsonRpcTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(): Promise<{
  chain: ScriptedHistory;
  history: AuthorityHistory;
  signed: SignedSignatures;
  logs: CapturedLogs;
  calls: () => RpcCall[];
  metrics: Metrics;
}> {
  recent = new RecentValues();
  const chain = new ScriptedHistory();
  server = await startJsonRpcServer(chain.answer);
  const metrics = createMetrics(new Registry());
  const rpc = createChainRpc({ chain: 'target', url: server.url, timeoutMs: 5_000, metrics });
  const signed = new SignedSignatures();
  const logs = captureLogs('info');
  const poolAddresses = poolAddressSet(authority.publicKey, CHAIN_ID, 8);
  const history = new AuthorityHistory({ rpc, authority: authority.publicKey, signed, recent, poolAddresses, metrics, logger: logs.logger });
  const s = server;
  return { chain, history, signed, logs, calls: () => s.calls, metrics };
}

const signal = () => new AbortController().signal;

const NOTHING = { transactions: [], complete: true };
const foreignOf = ({ signature, slot }: Entry) => ({ signature, slot, signedHere: false });
const ownOf = ({ signature, slot }: Entry) => ({ signature, slot, signedHere: true });
const lookedUp = (calls: RpcCall[]) => calls.filter((c) => c.method === 'getTransaction').map((c) => c.params[0] as string);

describe('AuthorityHistory', () => {
  it('the first read sets the baseline at the newest verified entry and reports nothing that came before', async () => {
    const { chain, history, calls } = await start();
    chain.land(3);
    expect(await history.readNew(signal())).toEqual(NOTHING);
    expect(calls()[0]).toEqual({
      method: 'getSignaturesForAddress',
      params: [authority.publicKey.toBase58(), expect.objectContaining({ limit: HISTORY_PAGE_LIMIT })],
    });
    expect(await history.readNew(signal())).toEqual(NOTHING);
    expect(calls().filter((c) => c.method === 'getSignaturesForAddress')[1]!.params[1]).toMatchObject({
      limit: HISTORY_PAGE_LIMIT,
      until: chain.entries[0]!.signature,
      minContextSlot: chain.entries[0]!.slot,
    });
  });

  it('a node that does not know `until` lists older history: nothing is reported, and the next read looks again from the same place', async () => {
    const { chain, history, signed } = await start();
    chain.land(5);
    await history.readNew(signal());
    const [foreign] = chain.land(1);
    chain.forgetsUntil = true;
    // The authority's own older transactions (signed by a previous life of this server) are not reported as a second signer.
    expect(await history.readNew(signal())).toEqual(NOTHING);
    chain.forgetsUntil = false;
    expect(signed.has(foreign!.signature)).toBe(false);
    expect(await history.readNew(signal())).toEqual({ transactions: [foreignOf(foreign!)], complete: true });
  });

  it('no history on the node: every read reports nothing (the check is off) instead of failing the cycle', async () => {
    const { chain, history } = await start();
    chain.noHistory = true;
    expect(await history.readNew(signal())).toEqual(NOTHING);
    expect(await history.readNew(signal())).toEqual(NOTHING);
  });

  it('lists back to the previous newest; marks what this process signed; looks up only the rest; drops transfers to the key', async () => {
    const { chain, history, signed, calls } = await start();
    await history.readNew(signal());
    const own = chain.land(30, 'own');
    for (const { signature } of own) signed.add(signature);
    const [foreign] = chain.land(1);
    const [funding] = chain.land(1, 'funder');
    const more = chain.land(3, 'own');
    for (const { signature } of more) signed.add(signature);
    const before = calls().length;

    const reported = await history.readNew(signal());
    expect(reported).toEqual({
      transactions: [...[...more].reverse().map(ownOf), foreignOf(foreign!), ...[...own].reverse().map(ownOf)],
      complete: true,
    });
    const read = calls().slice(before);
    expect(read.filter((c) => c.method === 'getSignaturesForAddress')).toHaveLength(1);
    expect(lookedUp(read)).toEqual([foreign!.signature, funding!.signature]);
    expect(await history.readNew(signal())).toEqual(NOTHING);
  });

  it(`lists at most ${HISTORY_MAX_PAGES} pages; a longer backlog is an incomplete read, said in a warn line`, async () => {
    const { chain, history, signed, logs, calls } = await start();
    await history.readNew(signal());
    const landed = chain.land(HISTORY_PAGE_LIMIT * HISTORY_MAX_PAGES + 7, 'own');
    for (const { signature } of landed) signed.add(signature);
    const before = calls().length;
    const read = await history.readNew(signal());
    expect(read.complete).toBe(false);
    expect(read.transactions).toHaveLength(HISTORY_PAGE_LIMIT * HISTORY_MAX_PAGES);
    expect(
      calls()
        .slice(before)
        .filter((c) => c.method === 'getSignaturesForAddress'),
    ).toHaveLength(HISTORY_MAX_PAGES);
    expect(logs.records()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        chain: 'target',
        listed: HISTORY_PAGE_LIMIT * HISTORY_MAX_PAGES,
        msg: expect.stringContaining('whether another key signed among them is unknown'),
      }),
    );
    expect(await history.readNew(signal())).toEqual(NOTHING);
  });

  it(`no unchecked tail: checks the oldest first, ${HISTORY_MAX_LOOKUPS} lookups a read, and the rest at the next read`, async () => {
    const { chain, history, logs, calls } = await start();
    await history.readNew(signal());
    chain.land(10, 'funder');
    const [foreign] = chain.land(1);
    const spam = chain.land(HISTORY_MAX_LOOKUPS, 'funder');
    // Ten cheap transfers a second listing the key no longer push a signed transaction out of sight.
    expect(await history.readNew(signal())).toEqual({ transactions: [foreignOf(foreign!)], complete: false });
    expect(logs.records()).toContainEqual(expect.objectContaining({ level: 'warn', chain: 'target', checked: HISTORY_MAX_LOOKUPS, unchecked: 11 }));
    const before = calls().length;
    const [next] = chain.land(1);
    expect(await history.readNew(signal())).toEqual({ transactions: [foreignOf(next!)], complete: true });
    expect(lookedUp(calls().slice(before))).toEqual([...spam.slice(-11).map((one) => one.signature), next!.signature]);
  });

  it('a forged entry (its signature does not verify) is ignored, counted and logged once, never looked up again, and never the cursor', async () => {
    const { chain, history, logs, calls } = await start();
    await history.readNew(signal());
    const [foreign] = chain.land(1);
    const forged = chain.land(3, 'forged');
    expect(await history.readNew(signal())).toEqual({ transactions: [foreignOf(foreign!)], complete: true });
    expect(logs.records().filter((r) => r['unverified'] !== undefined)).toEqual([
      expect.objectContaining({ level: 'warn', unverified: 3, first: forged[0]!.signature }),
    ]);
    const before = calls().length;
    // Listed again (the cursor stayed at the verified entry), decided without a lookup, not counted again.
    expect(await history.readNew(signal())).toEqual(NOTHING);
    expect(lookedUp(calls().slice(before))).toEqual([]);
    expect(calls().at(-1)!.params[1]).toMatchObject({ until: foreign!.signature });
    expect(logs.records().filter((r) => r['unverified'] !== undefined)).toHaveLength(1);
    const [next] = chain.land(1);
    expect(await history.readNew(signal())).toEqual({ transactions: [foreignOf(next!)], complete: true });
  });

  it('a listed signature answered with another transaction is forged too: a node cannot pass a real transaction off under a new id', async () => {
    const { chain, history } = await start();
    await history.readNew(signal());
    const [real] = chain.land(1);
    const [liar] = chain.land(1);
    liar!.wire = real!.wire;
    expect(await history.readNew(signal())).toEqual({ transactions: [foreignOf(real!)], complete: true });
  });

  it(`forged entries above the baseline, more than a page: the baseline is the newest entry that verifies, found past them (${HISTORY_LOOKUP_CONCURRENCY} lookups a try); until then each read is unknown`, async () => {
    const { chain, history } = await start();
    chain.land(2);
    chain.land(HISTORY_PAGE_LIMIT + 8, 'forged');
    const tries = Math.ceil(HISTORY_PAGE_LIMIT / HISTORY_LOOKUP_CONCURRENCY);
    for (let i = 0; i < tries; i++) expect(await history.readNew(signal())).toEqual({ transactions: [], complete: false });
    expect(await history.readNew(signal())).toEqual(NOTHING);
    const [foreign] = chain.land(1);
    // Neither the forged entries nor the two real ones from before the first read are reported.
    expect(await history.readNew(signal())).toEqual({ transactions: [foreignOf(foreign!)], complete: true });
  });

  it('a failed lookup never fails the cycle: the read is incomplete (a warn line) and leaves the cursor; the next read reports the same transactions', async () => {
    const { chain, history, logs } = await start();
    await history.readNew(signal());
    const [foreign] = chain.land(1);
    chain.failGetTransaction = true;
    expect(await history.readNew(signal())).toEqual({ transactions: [], complete: false });
    expect(logs.records()).toContainEqual(expect.objectContaining({ level: 'warn', msg: expect.stringContaining('could not be read') }));
    chain.failGetTransaction = false;
    expect(await history.readNew(signal())).toEqual({ transactions: [foreignOf(foreign!)], complete: true });
  });

  it('a replayed old transaction of the key (its blockhash none this process saw) is not a second signer: counted as unverified evidence, a warn line, never looked up again', async () => {
    const { chain, history, logs, calls, metrics } = await start();
    chain.land(2);
    await history.readNew(signal());
    const [replayed] = chain.land(1, 'replayed');
    expect(await history.readNew(signal())).toEqual(NOTHING);
    expect(await metricValue(metrics.signerEvidenceUnverified, { chain: 'target' })).toBe(1);
    expect(logs.records()).toContainEqual(
      expect.objectContaining({ level: 'warn', first: replayed!.signature, msg: expect.stringContaining('not new') }),
    );
    // Not the cursor: a later real transaction of another signer is still found, the replay not looked up again.
    const [foreign] = chain.land(1);
    expect(await history.readNew(signal())).toEqual({ transactions: [foreignOf(foreign!)], complete: true });
    expect(lookedUp(calls()).filter((signature) => signature === replayed!.signature)).toHaveLength(1);
  });

  it('a transaction of the baseline read that a node lists again after it is not new either', async () => {
    const { chain, history } = await start();
    const [old] = chain.land(2);
    await history.readNew(signal());
    // The node moves an entry of the first read's page after the cursor.
    chain.entries = [chain.entries.find((entry) => entry.signature === old!.signature)!, ...chain.entries];
    chain.entries[0] = { ...chain.entries[0]!, slot: 500 };
    expect(await history.readNew(signal())).toEqual(NOTHING);
  });

  it("`npm run ops -- nonce init` run by the operator (creating and initializing this key's pool accounts) is the operator's: an info line, not foreign", async () => {
    const { chain, history, logs } = await start();
    await history.readNew(signal());
    const address = nonceAddress(authority.publicKey, CHAIN_ID, 1);
    const init = [
      SystemProgram.createAccountWithSeed({
        fromPubkey: authority.publicKey,
        newAccountPubkey: address,
        basePubkey: authority.publicKey,
        seed: nonceSeed(CHAIN_ID, 1),
        lamports: 1,
        space: 80,
        programId: SystemProgram.programId,
      }),
      SystemProgram.nonceInitialize({ noncePubkey: address, authorizedPubkey: authority.publicKey }),
    ];
    const setUp = { ...signedWith(authority, init, 'authority'), slot: 300 };
    chain.entries.unshift(setUp);
    expect(await history.readNew(signal())).toEqual(NOTHING);
    expect(logs.records()).toContainEqual(
      expect.objectContaining({ level: 'info', transactions: [setUp.signature], msg: expect.stringContaining('nonce init') }),
    );
    // The same instructions for an address outside the pool are another signer's.
    const elsewhere = Keypair.generate().publicKey;
    const foreign = {
      ...signedWith(authority, [SystemProgram.nonceInitialize({ noncePubkey: elsewhere, authorizedPubkey: authority.publicKey })], 'authority'),
      slot: 301,
    };
    chain.entries.unshift(foreign);
    expect(await history.readNew(signal())).toEqual({ transactions: [foreignOf(foreign)], complete: true });
  });

  it("a transaction advancing a nonce from the first value this process saw of it may be its previous life's, left in flight at the restart: not new; one from a later value is a second signer's", async () => {
    const { chain, history, metrics } = await start();
    await history.readNew(signal());
    const account = nonceAddress(authority.publicKey, CHAIN_ID, 0);
    const advancing = (value: string, slot: number) => {
      const transaction = new Transaction({ feePayer: authority.publicKey, blockhash: value, lastValidBlockHeight: 0 }).add(
        SystemProgram.nonceAdvance({ noncePubkey: account, authorizedPubkey: authority.publicKey }),
        ComputeBudgetProgram.setComputeUnitLimit({ units: 1000 }),
      );
      transaction.sign(authority);
      return { signature: bs58.encode(transaction.signature!), wire: transaction.serialize().toString('base64'), slot };
    };
    const [first, later] = [bs58.encode(randomBytes(32)), bs58.encode(randomBytes(32))];
    recent.sawNonce(account.toBase58(), first);
    recent.sawNonce(account.toBase58(), later);
    chain.entries.unshift(advancing(first, 300));
    expect(await history.readNew(signal())).toEqual(NOTHING);
    expect(await metricValue(metrics.signerEvidenceUnverified, { chain: 'target' })).toBe(1);
    const twin = advancing(later, 301);
    chain.entries.unshift(twin);
    expect(await history.readNew(signal())).toEqual({
      transactions: [{ ...foreignOf(twin), advanced: { account: account.toBase58(), from: later } }],
      complete: true,
    });
  });

  it('keeps the most recent signatures this process signed, bounded', async () => {
    const signed = new SignedSignatures();
    const first = bs58.encode(randomBytes(64));
    signed.add(first);
    for (let i = 0; i < MAX_SIGNED_KEPT; i++) signed.add(String(i));
    expect(signed.has(first)).toBe(false);
    expect(signed.has('0')).toBe(true);
    expect(signed.has(String(MAX_SIGNED_KEPT - 1))).toBe(true);
  });
});
