import {
  type Keypair,
  NONCE_ACCOUNT_LENGTH,
  NonceAccount,
  PublicKey,
  SystemProgram,
  SYSVAR_RECENT_BLOCKHASHES_PUBKEY,
  SYSVAR_RENT_PUBKEY,
  type TransactionInstruction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { SYSTEM_PROGRAM_ID } from '../../../devnet/program/store.js';
import { durableNonceOf, fundedKeypair, randomKey, rpc, seededNonceAccount, sendWire, signedWire, testNode } from './helpers.js';

/** Durable nonces over JSON-RPC, as PROTOCOL.md "Durable nonces" describes them. */

const NONCE_RENT = 1_447_680;
const EXPIRY_SLOTS = 151;

const chain = testNode('file');

async function status(signature: string) {
  return (await chain.connection.getSignatureStatuses([signature], { searchTransactionHistory: true })).value[0];
}

async function nonceOf(address: PublicKey): Promise<NonceAccount> {
  const info = await chain.connection.getAccountInfo(address);
  if (info === null) throw new Error(`no nonce account at ${address.toBase58()}`);
  return NonceAccount.fromAccountData(info.data);
}

/** A nonce account at the address derived from the authority with `seed`, created and initialized in one transaction. */
async function createNonce(authority: Keypair, seed = 'nonce-0'): Promise<{ address: PublicKey; blockhash: string; signature: string }> {
  const { address, instructions } = await seededNonceAccount(authority.publicKey, seed, NONCE_RENT);
  const { blockhash } = await chain.connection.getLatestBlockhash();
  const { body } = await sendWire(chain.node.url, await signedWire(chain.connection, instructions, [authority], blockhash));
  expect(body.error).toBeUndefined();
  return { address, blockhash, signature: body.result as string };
}

/** Signed against the nonce's current value, AdvanceNonceAccount first. */
async function nonceWire(nonce: PublicKey, authority: Keypair, rest: TransactionInstruction[], value?: string): Promise<Buffer> {
  const advance = SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: authority.publicKey });
  return signedWire(chain.connection, [advance, ...rest], [authority], value ?? (await nonceOf(nonce)).nonce);
}

const transfer = (from: Keypair, lamports: number) => SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: randomKey(), lamports });

describe('System program: CreateAccountWithSeed and InitializeNonceAccount', () => {
  it('creates an 80-byte System account holding sha256("DURABLE_NONCE" || the latest blockhash), as a node reads it', async () => {
    const authority = fundedKeypair(chain.node);
    const { address, blockhash, signature } = await createNonce(authority);
    expect((await status(signature))?.err).toBeNull();
    const info = await chain.connection.getAccountInfo(address);
    expect(info).toMatchObject({ lamports: NONCE_RENT, owner: SystemProgram.programId, executable: false });
    expect(info?.data.length).toBe(80);
    // Versions::Current (1), State::Initialized (1), authority, nonce, lamports per signature.
    expect([...info!.data.subarray(0, 8)]).toEqual([1, 0, 0, 0, 1, 0, 0, 0]);
    const nonce = NonceAccount.fromAccountData(info!.data);
    expect(nonce.authorizedPubkey.toBase58()).toBe(authority.publicKey.toBase58());
    expect(nonce.nonce).toBe(durableNonceOf(blockhash));
    expect(nonce.feeCalculator.lamportsPerSignature).toBe(5_000);
    expect((await chain.connection.getNonce(address))?.nonce).toBe(nonce.nonce);
    expect(await chain.connection.getMinimumBalanceForRentExemption(NONCE_ACCOUNT_LENGTH)).toBe(NONCE_RENT);
    const { value } = (await rpc(chain.node.url, 'getMultipleAccounts', [[address.toBase58()], { encoding: 'base64' }])).body.result;
    expect(value[0]).toMatchObject({ lamports: NONCE_RENT, owner: SYSTEM_PROGRAM_ID, space: 80, rentEpoch: 2 ** 64 });
  });

  it('refuses a second create at the same address (AccountAlreadyInUse), a wrong derived address, an account below rent', async () => {
    const authority = fundedKeypair(chain.node);
    const { address } = await createNonce(authority, 'taken');
    const again = await createNonce(fundedKeypair(chain.node), 'other');
    expect(again.address.equals(address)).toBe(false);
    const wrong = SystemProgram.createAccountWithSeed({
      fromPubkey: authority.publicKey,
      basePubkey: authority.publicKey,
      seed: 'nonce-x',
      newAccountPubkey: address,
      lamports: NONCE_RENT,
      space: NONCE_ACCOUNT_LENGTH,
      programId: SystemProgram.programId,
    });
    const taken = {
      ...wrong,
      data: SystemProgram.createAccountWithSeed({
        fromPubkey: authority.publicKey,
        basePubkey: authority.publicKey,
        seed: 'taken',
        newAccountPubkey: address,
        lamports: NONCE_RENT,
        space: NONCE_ACCOUNT_LENGTH,
        programId: SystemProgram.programId,
      }).data,
    } as TransactionInstruction;
    const { instructions: underfunded } = await seededNonceAccount(authority.publicKey, 'poor', NONCE_RENT - 1);
    const simulate = async (instructions: TransactionInstruction[]) => {
      const wire = await signedWire(chain.connection, instructions, [authority]);
      return (await rpc(chain.node.url, 'simulateTransaction', [wire.toString('base64'), { encoding: 'base64' }])).body.result.value;
    };
    const derived = await PublicKey.createWithSeed(authority.publicKey, 'nonce-x', SystemProgram.programId);
    expect(await simulate([wrong])).toMatchObject({
      err: { InstructionError: [0, { Custom: 5 }] },
      logs: expect.arrayContaining([`Create: address ${address.toBase58()} does not match derived address ${derived.toBase58()}`]),
    });
    expect(await simulate([taken])).toMatchObject({
      err: { InstructionError: [0, { Custom: 0 }] },
      logs: expect.arrayContaining([
        `Create Account: account Address { address: ${address.toBase58()}, base: Some(${authority.publicKey.toBase58()}) } already in use`,
      ]),
    });
    expect(await simulate(underfunded)).toMatchObject({
      err: { InstructionError: [1, 'InsufficientFunds'] },
      logs: expect.arrayContaining([`Initialize nonce account: insufficient lamports ${NONCE_RENT - 1}, need ${NONCE_RENT}`]),
    });
  });

  it('serves the RecentBlockhashes and Rent sysvars as a node does', async () => {
    const { blockhash } = await chain.connection.getLatestBlockhash();
    const recent = await chain.connection.getAccountInfo(SYSVAR_RECENT_BLOCKHASHES_PUBKEY);
    expect(recent).toMatchObject({ owner: new PublicKey('Sysvar1111111111111111111111111111111111111'), lamports: 42_706_560 });
    expect(recent?.data.length).toBe(6_008);
    expect(recent?.data.readBigUInt64LE(0)).toBeGreaterThan(0n);
    expect(bs58.encode(recent!.data.subarray(8, 40))).toBe(blockhash);
    expect(recent?.data.readBigUInt64LE(40)).toBe(5_000n);
    const rent = await chain.connection.getAccountInfo(SYSVAR_RENT_PUBKEY);
    expect(rent).toMatchObject({ lamports: 1_009_200 });
    expect(rent?.data.readBigUInt64LE(0)).toBe(3_480n);
    expect(rent?.data.readDoubleLE(8)).toBe(2);
  });
});

describe('durable-nonce transactions', () => {
  it('land at any age, advance the nonce (150 compute units for the advance), and every version signed against the old value is refused for good', async () => {
    const authority = fundedKeypair(chain.node);
    const { address } = await createNonce(authority);
    chain.node.advanceSlots(EXPIRY_SLOTS);
    const before = (await nonceOf(address)).nonce;
    const wire = await nonceWire(address, authority, [transfer(authority, 1_000_000)]);
    const simulated = (await rpc(chain.node.url, 'simulateTransaction', [wire.toString('base64'), { encoding: 'base64' }])).body.result.value;
    expect(simulated).toMatchObject({ err: null, unitsConsumed: 300 });
    const sent = await sendWire(chain.node.url, wire);
    expect((await status(sent.body.result))?.err).toBeNull();
    const after = (await nonceOf(address)).nonce;
    expect(after).not.toBe(before);
    const landed = await rpc(chain.node.url, 'getTransaction', [sent.body.result, { encoding: 'base64', maxSupportedTransactionVersion: 0 }]);
    expect(landed.body.result.meta).toMatchObject({ fee: 5_000, computeUnitsConsumed: 300 });

    const rival = await nonceWire(address, authority, [transfer(authority, 2_000_000)], before);
    const refused = await sendWire(chain.node.url, rival);
    expect(refused.body.error).toMatchObject({
      code: -32002,
      message: 'Transaction simulation failed: Blockhash not found',
      data: { err: 'BlockhashNotFound' },
    });
    const skipped = await sendWire(chain.node.url, rival, true);
    chain.node.advanceSlots(1);
    expect(await status(skipped.body.result)).toBeNull();
    // The landed one itself, sent again: its nonce moved, so Blockhash not found before AlreadyProcessed.
    expect((await sendWire(chain.node.url, wire)).body.error).toMatchObject({ data: { err: 'BlockhashNotFound' } });
  });

  it('that fail in execution still pay their fee and advance the nonce (Agave), so no other version lands', async () => {
    const authority = fundedKeypair(chain.node, 10_000_000);
    const { address } = await createNonce(authority);
    const balance = await chain.connection.getBalance(authority.publicKey);
    const before = (await nonceOf(address)).nonce;
    const failing = await nonceWire(address, authority, [transfer(authority, 100_000_000)]);
    const sent = await sendWire(chain.node.url, failing, true);
    expect((await status(sent.body.result))?.err).toEqual({ InstructionError: [1, { Custom: 1 }] });
    expect(await chain.connection.getBalance(authority.publicKey)).toBe(balance - 5_000);
    expect((await nonceOf(address)).nonce).not.toBe(before);
    const rival = await sendWire(chain.node.url, await nonceWire(address, authority, [transfer(authority, 1_000_000)], before));
    expect(rival.body.error).toMatchObject({ data: { err: 'BlockhashNotFound' } });
  });

  it('are not durable without the authority signing the advance, nor with the advance second', async () => {
    const authority = fundedKeypair(chain.node);
    const stranger = fundedKeypair(chain.node);
    const { address } = await createNonce(authority);
    const value = (await nonceOf(address)).nonce;
    const advance = SystemProgram.nonceAdvance({ noncePubkey: address, authorizedPubkey: authority.publicKey });
    const unsigned = {
      ...advance,
      keys: advance.keys.map((key) => (key.isSigner ? { ...key, pubkey: stranger.publicKey } : key)),
    } as TransactionInstruction;
    const cases = [
      await signedWire(chain.connection, [unsigned], [stranger], value),
      await signedWire(chain.connection, [transfer(authority, 1), advance], [authority], value),
    ];
    for (const wire of cases) expect((await sendWire(chain.node.url, wire)).body.error).toMatchObject({ data: { err: 'BlockhashNotFound' } });
    // With a recent blockhash, the stranger's advance runs and fails as Agave's does.
    const { body } = await rpc(chain.node.url, 'simulateTransaction', [
      (await signedWire(chain.connection, [unsigned], [stranger])).toString('base64'),
      { encoding: 'base64' },
    ]);
    expect(body.result.value).toMatchObject({
      err: { InstructionError: [0, 'MissingRequiredSignature'] },
      logs: expect.arrayContaining([`Advance nonce account: Account ${authority.publicKey.toBase58()} must be a signer`]),
    });
  });

  it('advance at most once per blockhash: a second advance in one transaction fails with NonceBlockhashNotExpired', async () => {
    const authority = fundedKeypair(chain.node);
    const { address } = await createNonce(authority);
    const advance = SystemProgram.nonceAdvance({ noncePubkey: address, authorizedPubkey: authority.publicKey });
    const wire = await signedWire(chain.connection, [advance, advance], [authority]);
    const { body } = await rpc(chain.node.url, 'simulateTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
    expect(body.result.value).toMatchObject({
      err: { InstructionError: [1, { Custom: 7 }] },
      logs: expect.arrayContaining(['Advance nonce account: nonce can only advance once per slot']),
    });
  });
});

describe('WithdrawNonceAccount and AuthorizeNonceAccount', () => {
  it('hand the nonce to a new authority, then close the account by withdrawing everything', async () => {
    const authority = fundedKeypair(chain.node);
    const next = fundedKeypair(chain.node);
    const { address } = await createNonce(authority);
    const authorize = SystemProgram.nonceAuthorize({
      noncePubkey: address,
      authorizedPubkey: authority.publicKey,
      newAuthorizedPubkey: next.publicKey,
    });
    expect((await sendWire(chain.node.url, await signedWire(chain.connection, [authorize], [authority]))).body.error).toBeUndefined();
    expect((await nonceOf(address)).authorizedPubkey.toBase58()).toBe(next.publicKey.toBase58());
    const to = randomKey();
    const partial = SystemProgram.nonceWithdraw({ noncePubkey: address, authorizedPubkey: next.publicKey, toPubkey: to, lamports: 1 });
    const { body } = await rpc(chain.node.url, 'simulateTransaction', [
      (await signedWire(chain.connection, [partial], [next])).toString('base64'),
      { encoding: 'base64' },
    ]);
    expect(body.result.value).toMatchObject({ err: { InstructionError: [0, 'InsufficientFunds'] } });
    const all = SystemProgram.nonceWithdraw({ noncePubkey: address, authorizedPubkey: next.publicKey, toPubkey: to, lamports: NONCE_RENT });
    expect((await sendWire(chain.node.url, await signedWire(chain.connection, [all], [next]))).body.error).toBeUndefined();
    expect(await chain.connection.getAccountInfo(address)).toBeNull();
    expect(await chain.connection.getBalance(to)).toBe(NONCE_RENT);
  });
});
