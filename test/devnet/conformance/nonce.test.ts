import {
  Keypair,
  NONCE_ACCOUNT_LENGTH,
  NonceAccount,
  PublicKey,
  SystemProgram,
  SYSVAR_RECENT_BLOCKHASHES_PUBKEY,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
import { nonceAddress, nonceSeed, nonceSetupInstructions } from '../../../src/chain/nonce-account.js';
import { DevnetRuntime } from './devnet-runtime.js';
import { durableNonceOf } from '../rpc/helpers.js';
import { LiteSvmRuntime } from './litesvm-runtime.js';
import { signedWire, syncBlockhash } from './signed-pair.js';
import { describeOutcome, type Outcome } from './outcome.js';

/**
 * Durable nonces on the devnet and on Agave's runtime (LiteSVM), the same signed bytes to both:
 * the nonce account created with a seed and initialized, a nonce transaction after its
 * blockhash expired, a version signed against the old value refused once the nonce moved, and
 * the compute units of the advance. Where LiteSVM 1.5 is not Agave the devnet follows Agave, and
 * a test here names each of the five differences (docs/devnet.md, "Where LiteSVM 1.5 is not
 * Agave"): the value an advance stores, a second nonce transaction in one slot, a failed
 * transaction's nonce, a transaction that fails to load (SIMD-0191), and the RecentBlockhashes
 * sysvar's size. Each then gives LiteSVM the devnet's state so that the next case starts from one.
 */

const SOL = 1_000_000_000n;
const NONCE_RENT = 1_447_680n;
const EXPIRY_SLOTS = 151;

let node: DevnetNode;
let devnet: DevnetRuntime;
let litesvm: LiteSvmRuntime;
const authority = Keypair.generate();
const recipient = Keypair.generate().publicKey;
/** Signs where the authority should have. */
const stranger = Keypair.generate();
let nonce: PublicKey;
let accounts: string[];

beforeAll(async () => {
  node = await startDevnetNode({ name: 'conformance', chainId: 1, slotIntervalMs: 0 });
  devnet = new DevnetRuntime(node);
  litesvm = new LiteSvmRuntime();
  nonce = await PublicKey.createWithSeed(authority.publicKey, 'nonce-0', SystemProgram.programId);
  accounts = [authority.publicKey, nonce, recipient, stranger.publicKey].map((key) => key.toBase58());
  node.airdrop(authority.publicKey, 10n * SOL);
  node.airdrop(stranger.publicKey, SOL);
  litesvm.fund(
    new Map([
      [authority.publicKey.toBase58(), 10n * SOL],
      [stranger.publicKey.toBase58(), SOL],
    ]),
  );
});

afterAll(async () => {
  await node.close();
});

async function runBoth(bytes: Uint8Array): Promise<{ devnet: Outcome; litesvm: Outcome }> {
  const { recorded: _recorded, ...onDevnet } = await devnet.run(bytes, accounts);
  return { devnet: onDevnet, litesvm: litesvm.run(bytes, accounts) };
}

async function expectSame(bytes: Uint8Array): Promise<Outcome> {
  const both = await runBoth(bytes);
  expect(describeOutcome(both.devnet)).toBe(describeOutcome(both.litesvm));
  return both.litesvm;
}

async function nonceData(): Promise<{ devnet: Uint8Array | undefined; litesvm: Uint8Array | undefined }> {
  return { devnet: await devnet.accountData(nonce.toBase58()), litesvm: litesvm.accountData(nonce.toBase58()) };
}

const advance = () => SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: authority.publicKey });
const pay = (lamports: bigint) => SystemProgram.transfer({ fromPubkey: authority.publicKey, toPubkey: recipient, lamports });
const storedNonce = (data: Uint8Array | undefined) => NonceAccount.fromAccountData(Buffer.from(data ?? new Uint8Array(NONCE_ACCOUNT_LENGTH))).nonce;

describe('durable nonces: the devnet and Agave runtime (LiteSVM) agree', () => {
  let initialValue: string;

  it('CreateAccountWithSeed + InitializeNonceAccount: 300 compute units, the same 80 bytes', async () => {
    const blockhash = await syncBlockhash(devnet, litesvm);
    const create = SystemProgram.createAccountWithSeed({
      fromPubkey: authority.publicKey,
      basePubkey: authority.publicKey,
      seed: 'nonce-0',
      newAccountPubkey: nonce,
      lamports: Number(NONCE_RENT),
      space: NONCE_ACCOUNT_LENGTH,
      programId: SystemProgram.programId,
    });
    const init = SystemProgram.nonceInitialize({ noncePubkey: nonce, authorizedPubkey: authority.publicKey });
    const outcome = await expectSame(signedWire(authority, [create, init], blockhash));
    expect(outcome).toMatchObject({ landed: true, error: null, fee: 5_000n, unitsConsumed: 300 });
    const data = await nonceData();
    expect(data.devnet).toEqual(data.litesvm);
    initialValue = storedNonce(data.devnet);
    expect(initialValue).toBe(durableNonceOf(blockhash));
  });

  it('a nonce transaction after its blockhash expired lands on both; the advance costs 150 compute units', async () => {
    node.advanceSlots(EXPIRY_SLOTS);
    const latest = await syncBlockhash(devnet, litesvm);
    const outcome = await expectSame(signedWire(authority, [advance(), pay(SOL)], initialValue));
    expect(outcome).toMatchObject({ landed: true, error: null, fee: 5_000n, unitsConsumed: 300 });
    const data = await nonceData();
    expect(storedNonce(data.devnet)).toBe(durableNonceOf(latest));
    expect(storedNonce(data.litesvm)).toBe(durableNonceOf(initialValue));
    expectSameBesidesNonce(data);
    litesvm.setSystemAccount(nonce.toBase58(), NONCE_RENT, data.devnet!);
  });

  it('a version signed against the old value is refused once the nonce moved: BlockhashNotFound', async () => {
    await syncBlockhash(devnet, litesvm);
    const outcome = await expectSame(signedWire(authority, [advance(), pay(2n * SOL)], initialValue));
    expect(outcome).toMatchObject({ landed: false, error: { err: 'BlockhashNotFound' }, fee: 0n });
  });

  it('a nonce transaction that fails in execution pays its fee on both; Agave (and the devnet) advance its nonce, LiteSVM 1.5 does not', async () => {
    const latest = await syncBlockhash(devnet, litesvm);
    const value = storedNonce((await nonceData()).devnet);
    const both = await runBoth(signedWire(authority, [advance(), pay(100n * SOL)], value));
    const failed = { landed: true, error: { err: { InstructionError: [1, { Custom: 1 }] } }, fee: 5_000n, unitsConsumed: 300 };
    expect(both.devnet).toMatchObject(failed);
    expect(both.litesvm).toMatchObject(failed);
    expect(both.devnet.balances).toEqual(both.litesvm.balances);
    const after = await nonceData();
    expect(storedNonce(after.litesvm)).toBe(value);
    expect(storedNonce(after.devnet)).toBe(durableNonceOf(latest));
    expectSameBesidesNonce(after);
  });

  it('a nonce transaction that fails to load (an unknown program): LiteSVM 1.5 drops it for free; the devnet, as Agave since SIMD-0191, charges the fee and advances the nonce', async () => {
    litesvm.setSystemAccount(nonce.toBase58(), NONCE_RENT, (await nonceData()).devnet!);
    const latest = await syncBlockhash(devnet, litesvm);
    const value = storedNonce((await nonceData()).devnet);
    const unknownProgram = new TransactionInstruction({ programId: Keypair.generate().publicKey, keys: [], data: Buffer.from([0]) });
    const both = await runBoth(signedWire(authority, [advance(), unknownProgram], value));
    expect(both.litesvm).toMatchObject({ landed: false, error: { err: 'InvalidProgramForExecution' }, fee: 0n, unitsConsumed: 0 });
    expect(both.devnet).toMatchObject({ landed: true, error: { err: 'InvalidProgramForExecution' }, fee: 5_000n, unitsConsumed: 0 });
    const after = await nonceData();
    expect(storedNonce(after.litesvm)).toBe(value);
    expect(storedNonce(after.devnet)).toBe(durableNonceOf(latest));
    expectSameBesidesNonce(after);
    await giveLiteSvmTheDevnetState();
  });

  it('a second nonce transaction on one account in one slot: LiteSVM lands it; Agave, and the devnet, refuse a nonce still at the value this slot gave it (BlockhashNotFound)', async () => {
    litesvm.setSystemAccount(nonce.toBase58(), NONCE_RENT, (await nonceData()).devnet!);
    await syncBlockhash(devnet, litesvm);
    const first = await expectSame(signedWire(authority, [advance(), pay(1_000_000n)], storedNonce((await nonceData()).devnet)));
    expect(first).toMatchObject({ landed: true, error: null });
    // LiteSVM's blockhash has not moved: its second advance is in the same slot, and it lands.
    const second = litesvm.run(signedWire(authority, [advance(), pay(2_000_000n)], storedNonce(litesvm.accountData(nonce.toBase58()))), accounts);
    expect(second).toMatchObject({ landed: true, error: null, fee: 5_000n });
    // Without its slot timer (as this suite runs it) the devnet lands each transaction in a block
    // of its own, so its nonce is never at the current blockhash's value after a landing; written
    // there, as a cluster leaves it after an advance in this slot, a transaction signed against it
    // is refused before any fee (with a slot timer, two sent in one slot: test/devnet/rpc/blocks.test.ts).
    const { blockhash } = await devnet.latestBlockhash();
    const data = (await nonceData()).devnet!.slice();
    data.set(bs58.decode(durableNonceOf(blockhash)), 40);
    node.bank.journal().writeData(nonce.toBase58(), 0, data);
    const { recorded: _recorded, ...refused } = await devnet.run(
      signedWire(authority, [advance(), pay(3_000_000n)], durableNonceOf(blockhash)),
      accounts,
    );
    expect(refused).toMatchObject({ landed: false, error: { err: 'BlockhashNotFound' }, fee: 0n });
    await giveLiteSvmTheDevnetState();
  });

  it('the RecentBlockhashes sysvar: 6,008 bytes on the devnet as on a cluster (150 entries), 48 in LiteSVM (one)', async () => {
    const id = SYSVAR_RECENT_BLOCKHASHES_PUBKEY.toBase58();
    expect((await devnet.accountData(id))?.length).toBe(6_008);
    expect(litesvm.accountData(id)?.length).toBe(48);
  });
});

describe('System instructions that fail: the devnet and LiteSVM refuse them alike', () => {
  function signedBy(signers: Keypair[], instructions: TransactionInstruction[], recentBlockhash: string): Uint8Array {
    const message = new TransactionMessage({ payerKey: signers[0]!.publicKey, recentBlockhash, instructions }).compileToLegacyMessage();
    const tx = new VersionedTransaction(message);
    tx.sign(signers);
    return tx.serialize();
  }

  const createWithSeed = (seed: string, to: PublicKey, lamports: bigint) =>
    SystemProgram.createAccountWithSeed({
      fromPubkey: authority.publicKey,
      basePubkey: authority.publicKey,
      seed,
      newAccountPubkey: to,
      lamports: Number(lamports),
      space: NONCE_ACCOUNT_LENGTH,
      programId: SystemProgram.programId,
    });

  it('CreateAccount + InitializeNonceAccount at a keypair address (web3.js createNonceAccount) lands alike, and so does a create the new key did not sign', async () => {
    const second = Keypair.generate();
    const instructions = SystemProgram.createNonceAccount({
      fromPubkey: authority.publicKey,
      noncePubkey: second.publicKey,
      authorizedPubkey: authority.publicKey,
      lamports: Number(NONCE_RENT),
    }).instructions;
    const unsigned = {
      ...instructions[0]!,
      keys: instructions[0]!.keys.map((key) => ({ ...key, isSigner: key.pubkey.equals(authority.publicKey) })),
    };
    expect(await expectSame(signedBy([authority], [unsigned], await syncBlockhash(devnet, litesvm)))).toMatchObject({
      landed: true,
      error: { err: { InstructionError: [0, 'MissingRequiredSignature'] } },
    });
    const outcome = await expectSame(signedBy([authority, second], instructions, await syncBlockhash(devnet, litesvm)));
    // Two signatures, and the rent the new account holds (it is not one of the compared accounts).
    expect(outcome).toMatchObject({ landed: true, error: null, fee: 10_000n + NONCE_RENT, unitsConsumed: 300 });
    expect(await devnet.accountData(second.publicKey.toBase58())).toEqual(litesvm.accountData(second.publicKey.toBase58()));
  });

  it.each([
    [
      'an advance the authority did not sign',
      () => [stranger],
      () => [{ ...advance(), keys: advance().keys.map((key) => (key.isSigner ? { ...key, pubkey: stranger.publicKey } : key)) }],
      { InstructionError: [0, 'MissingRequiredSignature'] },
    ],
    [
      'two advances in one blockhash (NonceBlockhashNotExpired)',
      () => [authority],
      () => [advance(), advance()],
      { InstructionError: [1, { Custom: 7 }] },
    ],
    [
      'an initialize of an initialized nonce',
      () => [authority],
      () => [SystemProgram.nonceInitialize({ noncePubkey: nonce, authorizedPubkey: authority.publicKey })],
      { InstructionError: [0, 'InvalidAccountData'] },
    ],
    [
      'a withdraw that would leave the nonce below rent',
      () => [authority],
      () => [SystemProgram.nonceWithdraw({ noncePubkey: nonce, authorizedPubkey: authority.publicKey, toPubkey: recipient, lamports: 1 })],
      { InstructionError: [0, 'InsufficientFunds'] },
    ],
    [
      'an authorize by someone else',
      () => [stranger],
      () => [SystemProgram.nonceAuthorize({ noncePubkey: nonce, authorizedPubkey: stranger.publicKey, newAuthorizedPubkey: stranger.publicKey })],
      { InstructionError: [0, 'MissingRequiredSignature'] },
    ],
    [
      'a create at an address its seed does not derive (AddressWithSeedMismatch)',
      () => [authority],
      () => [createWithSeed('other', nonce, NONCE_RENT)],
      { InstructionError: [0, { Custom: 5 }] },
    ],
    [
      'a create at an address in use (AccountAlreadyInUse)',
      () => [authority],
      () => [createWithSeed('nonce-0', nonce, NONCE_RENT)],
      { InstructionError: [0, { Custom: 0 }] },
    ],
  ] as Array<[string, () => Keypair[], () => TransactionInstruction[], unknown]>)('%s', async (_name, signers, instructions, err) => {
    const blockhash = await syncBlockhash(devnet, litesvm);
    const outcome = await expectSame(signedBy(signers(), instructions(), blockhash));
    expect(outcome).toMatchObject({ landed: true, error: { err }, fee: 5_000n });
    litesvm.setSystemAccount(nonce.toBase58(), NONCE_RENT, (await nonceData()).devnet!);
  });
});

describe('a nonce account at a derived address someone funded first (npm run ops -- nonce init): the devnet and LiteSVM agree', () => {
  let chainId = 100;

  /** A fresh pool address of the authority (`nonceAddress`, a chain id of its own) holding `lamports`, sent by the stranger to both runtimes; its seed. */
  async function funded(lamports: bigint): Promise<{ address: PublicKey; seed: string; chainId: number }> {
    chainId += 1;
    const address = nonceAddress(authority.publicKey, chainId, 0);
    const seed = nonceSeed(chainId, 0);
    if (lamports === 0n) return { address, seed, chainId };
    const gift = SystemProgram.transfer({ fromPubkey: stranger.publicKey, toPubkey: address, lamports });
    const message = new TransactionMessage({
      payerKey: stranger.publicKey,
      recentBlockhash: await syncBlockhash(devnet, litesvm),
      instructions: [gift],
    }).compileToLegacyMessage();
    const tx = new VersionedTransaction(message);
    tx.sign([stranger]);
    expect(await expectSame(tx.serialize())).toMatchObject({ landed: true, error: null });
    return { address, seed, chainId };
  }

  const allocateWithSeed = (address: PublicKey, seed: string, base = authority.publicKey) =>
    SystemProgram.allocate({ accountPubkey: address, basePubkey: base, seed, space: NONCE_ACCOUNT_LENGTH, programId: SystemProgram.programId });

  const unsignedBase = (ix: TransactionInstruction) =>
    new TransactionInstruction({ ...ix, keys: ix.keys.map((key) => ({ ...key, isSigner: false })) });

  async function expectSameAt(address: PublicKey, instructions: TransactionInstruction[], signers: Keypair[] = [authority]): Promise<Outcome> {
    const message = new TransactionMessage({
      payerKey: signers[0]!.publicKey,
      recentBlockhash: await syncBlockhash(devnet, litesvm),
      instructions,
    }).compileToLegacyMessage();
    const tx = new VersionedTransaction(message);
    tx.sign(signers);
    const wired = tx.serialize();
    const onDevnet = await devnet.run(wired, [...accounts, address.toBase58()]);
    const { recorded: _recorded, ...outcome } = onDevnet;
    const onLitesvm = litesvm.run(wired, [...accounts, address.toBase58()]);
    expect(describeOutcome(outcome)).toBe(describeOutcome(onLitesvm));
    expect(await devnet.accountData(address.toBase58())).toEqual(litesvm.accountData(address.toBase58()));
    return onLitesvm;
  }

  it.each([
    ['nothing there: the whole rent', 0n],
    ['less than the rent: topped up', 890_880n],
    ['more than the rent: no top-up', 2n * NONCE_RENT],
  ])(
    "%s: nonce init's AllocateWithSeed (allocate and assign), Transfer, InitializeNonceAccount land alike, 150 compute units each",
    async (_name, gift) => {
      const { address, chainId: id } = await funded(gift);
      const topUp = gift < NONCE_RENT ? Number(NONCE_RENT - gift) : 0;
      const outcome = await expectSameAt(address, nonceSetupInstructions(authority.publicKey, id, 0, topUp));
      expect(outcome).toMatchObject({ landed: true, error: null, fee: 5_000n, unitsConsumed: 150 * (topUp > 0 ? 3 : 2) });
      expect(litesvm.accountData(address.toBase58())).toHaveLength(NONCE_ACCOUNT_LENGTH);
      expect(NonceAccount.fromAccountData(Buffer.from((await devnet.accountData(address.toBase58()))!)).authorizedPubkey.toBase58()).toBe(
        authority.publicKey.toBase58(),
      );
    },
  );

  it.each([
    [
      'AllocateWithSeed the base did not sign (another pays)',
      (address: PublicKey, seed: string) => [unsignedBase(allocateWithSeed(address, seed))],
      { InstructionError: [0, 'MissingRequiredSignature'] },
      [stranger],
    ],
    [
      'AllocateWithSeed with a seed that does not derive the address',
      (address: PublicKey) => [allocateWithSeed(address, 'other')],
      { InstructionError: [0, { Custom: 5 }] },
    ],
    [
      'AllocateWithSeed twice (AccountAlreadyInUse)',
      (address: PublicKey, seed: string) => [allocateWithSeed(address, seed), allocateWithSeed(address, seed)],
      { InstructionError: [1, { Custom: 0 }] },
    ],
    [
      'AllocateWithSeed without a top-up, then InitializeNonceAccount (InsufficientFunds)',
      (address: PublicKey, seed: string) => [
        allocateWithSeed(address, seed),
        SystemProgram.nonceInitialize({ noncePubkey: address, authorizedPubkey: authority.publicKey }),
      ],
      { InstructionError: [1, 'InsufficientFunds'] },
    ],
    [
      'AssignWithSeed to another owner: a nonce address derives only with the System program (AddressWithSeedMismatch)',
      (address: PublicKey, seed: string) => [
        SystemProgram.assign({ accountPubkey: address, basePubkey: authority.publicKey, seed, programId: SystemProgram.programId }),
        SystemProgram.assign({ accountPubkey: address, basePubkey: authority.publicKey, seed, programId: stranger.publicKey }),
      ],
      { InstructionError: [1, { Custom: 5 }] },
    ],
  ] as Array<[string, (address: PublicKey, seed: string) => TransactionInstruction[], unknown, Keypair[]?]>)(
    '%s: refused alike',
    async (_name, instructions, err, signers) => {
      const { address, seed } = await funded(890_880n);
      expect(await expectSameAt(address, instructions(address, seed), signers)).toMatchObject({ landed: true, error: { err }, fee: 5_000n });
    },
  );

  it('Allocate and Assign of a keypair account it signs: the same account on both', async () => {
    const owned = Keypair.generate();
    const instructions = [
      SystemProgram.allocate({ accountPubkey: owned.publicKey, space: 8 }),
      SystemProgram.assign({ accountPubkey: owned.publicKey, programId: stranger.publicKey }),
    ];
    const topUp = SystemProgram.transfer({ fromPubkey: authority.publicKey, toPubkey: owned.publicKey, lamports: 946_560n });
    expect(await expectSameAt(owned.publicKey, [topUp, ...instructions], [authority, owned])).toMatchObject({
      landed: true,
      error: null,
      unitsConsumed: 450,
    });
  });
});

/** Where the two runtimes were let differ: LiteSVM takes the devnet's balances and nonce account, so the next case starts from one state. */
async function giveLiteSvmTheDevnetState(): Promise<void> {
  litesvm.fund(new Map([authority.publicKey, recipient].map((key) => [key.toBase58(), node.bank.account(key.toBase58())?.lamports ?? 0n])));
  litesvm.setSystemAccount(nonce.toBase58(), NONCE_RENT, (await nonceData()).devnet!);
}

/** Version, state, authority and lamports per signature: all of the 80 bytes but the nonce (40..72). */
function expectSameBesidesNonce(data: { devnet: Uint8Array | undefined; litesvm: Uint8Array | undefined }): void {
  const besidesNonce = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : [...bytes.subarray(0, 40), ...bytes.subarray(72)]);
  expect(besidesNonce(data.devnet)).toEqual(besidesNonce(data.litesvm));
}
