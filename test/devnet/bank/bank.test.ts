import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
  type MessageV0,
} from '@solana/web3.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeTrackerHeader } from '../../../src/chain/codec/accounts.js';
import { depositInstruction, initializeTrackerInstruction } from '../../../devnet/instructions.js';
import { DEFAULT_PROGRAM_ID } from '../../../src/chain/codec/layout.js';
import { depositTrackerAddress } from '../../../src/chain/pda.js';
import { Bank, LAMPORTS_PER_SIGNATURE } from '../../../devnet/bank/bank.js';
import { InvalidTransactionError, parseTransaction, verifySignatures } from '../../../devnet/bank/transaction.js';
import { rentExemptMinimum } from '../../../devnet/program/store.js';

const programId = new PublicKey(DEFAULT_PROGRAM_ID);
const TARGET = 2;
const tracker = depositTrackerAddress(programId, TARGET);
const banks: Bank[] = [];

afterEach(() => {
  for (const bank of banks.splice(0)) bank.close();
  vi.useRealTimers();
});

function newBank(slotIntervalMs = 0): Bank {
  const bank = new Bank({ chainId: 1, programId, slotIntervalMs });
  banks.push(bank);
  return bank;
}

function funded(bank: Bank, lamports = 1_000_000_000n): Keypair {
  const keypair = Keypair.generate();
  bank.airdrop(keypair.publicKey.toBase58(), lamports);
  return keypair;
}

function signed(bank: Bank, instructions: TransactionInstruction[], signers: Keypair[], blockhash = bank.latestBlockhash().blockhash) {
  const tx = new Transaction({ feePayer: signers[0]!.publicKey, recentBlockhash: blockhash }).add(...instructions);
  tx.sign(...signers);
  return parseTransaction(tx.serialize());
}

function initTracker(bank: Bank, governance: Keypair): void {
  const ix = initializeTrackerInstruction({
    name: 'initialize_deposit_tracker',
    programId,
    governance: governance.publicKey,
    tracker,
    targetChainId: TARGET,
    capacity: 8n,
    threshold: 1,
    authorities: [Keypair.generate().publicKey.toBase58()],
  });
  const tx = signed(bank, [ix], [governance]);
  bank.submit(tx, false);
  expect(bank.signatureStatus(tx.signature)).toMatchObject({ slot: expect.any(Number), err: null });
}

function deposit(depositor: Keypair, amount: bigint): TransactionInstruction {
  return depositInstruction({
    programId,
    depositor: depositor.publicKey,
    depositTracker: tracker,
    amount,
    recipient: Keypair.generate().publicKey.toBase58(),
    sourceMint: Keypair.generate().publicKey.toBase58(),
  });
}

function entryCount(bank: Bank): bigint {
  return decodeTrackerHeader(bank.account(tracker.toBase58())!.data, 'DepositTracker', 'test').entryCount;
}

function lamports(bank: Bank, keypair: Keypair): bigint {
  return bank.account(keypair.publicKey.toBase58())?.lamports ?? 0n;
}

describe('Bank: fees and statuses', () => {
  it('charges 5000 lamports per signature to the fee payer and records the status in the slot it landed', () => {
    const bank = newBank();
    const payer = funded(bank);
    const cosigner = funded(bank);
    initTracker(bank, payer);
    const before = lamports(bank, payer);
    const tx = signed(bank, [deposit(payer, 5n), deposit(cosigner, 6n)], [payer, cosigner]);
    const slot = bank.slot;
    bank.submit(tx, false);
    expect(lamports(bank, payer)).toBe(before - 2n * BigInt(LAMPORTS_PER_SIGNATURE));
    expect(bank.signatureStatus(tx.signature)).toMatchObject({ slot, err: null });
    expect(bank.slot).toBe(slot + 1);
    expect(entryCount(bank)).toBe(2n);
  });

  it('a failing instruction undoes every instruction of the transaction but the fee is charged', () => {
    const bank = newBank();
    const payer = funded(bank);
    initTracker(bank, payer);
    const before = lamports(bank, payer);
    const trackerBefore = bank.account(tracker.toBase58())!.data.slice();
    const tx = signed(bank, [deposit(payer, 5n), deposit(payer, 0n)], [payer]);
    bank.submit(tx, false);
    expect(bank.signatureStatus(tx.signature)?.err).toEqual({ InstructionError: [1, { Custom: 6011 }] });
    expect(bank.account(tracker.toBase58())!.data).toEqual(trackerBefore);
    expect(lamports(bank, payer)).toBe(before - 5_000n);
  });

  it('rejects a duplicate signature as AlreadyProcessed and never charges twice', () => {
    const bank = newBank();
    const payer = funded(bank);
    initTracker(bank, payer);
    const tx = signed(bank, [deposit(payer, 5n)], [payer]);
    bank.submit(tx, false);
    const after = lamports(bank, payer);
    expect(bank.simulate(tx, { checkBlockhash: true }).err).toBe('AlreadyProcessed');
    bank.submit(tx, false);
    expect(lamports(bank, payer)).toBe(after);
    expect(entryCount(bank)).toBe(1n);
  });

  it('reports AccountNotFound for an unknown fee payer and InsufficientFundsForFee for a poor one; neither lands', () => {
    const bank = newBank();
    const ghost = Keypair.generate();
    const poor = funded(bank, 4_999n);
    const ghostTx = signed(bank, [deposit(ghost, 1n)], [ghost]);
    const poorTx = signed(bank, [deposit(poor, 1n)], [poor]);
    expect(bank.simulate(ghostTx, { checkBlockhash: true }).err).toBe('AccountNotFound');
    expect(bank.simulate(poorTx, { checkBlockhash: true }).err).toBe('InsufficientFundsForFee');
    bank.submit(poorTx, false);
    expect(bank.signatureStatus(poorTx.signature)).toBeUndefined();
    expect(lamports(bank, poor)).toBe(4_999n);
  });

  it('simulation runs the program and changes nothing', () => {
    const bank = newBank();
    const payer = funded(bank);
    initTracker(bank, payer);
    const before = lamports(bank, payer);
    const ok = bank.simulate(signed(bank, [deposit(payer, 5n)], [payer]), { checkBlockhash: true, accounts: [tracker.toBase58()] });
    expect(ok.err).toBeNull();
    expect(ok.logs).toContain('Program log: Instruction: Deposit');
    expect(decodeTrackerHeader(ok.accounts[0]!.data, 'DepositTracker', 'test').entryCount).toBe(1n);
    expect(entryCount(bank)).toBe(0n);
    expect(lamports(bank, payer)).toBe(before);
    const failed = bank.simulate(signed(bank, [deposit(payer, 0n)], [payer]), { checkBlockhash: true });
    expect(failed.err).toEqual({ InstructionError: [0, { Custom: 6011 }] });
    expect(failed.logs.at(-1)).toBe(`Program ${DEFAULT_PROGRAM_ID} failed: custom program error: 0x177b`);
    expect(failed.logs).toContain(
      'Program log: AnchorError occurred. Error Code: InvalidAmount. Error Number: 6011. Error Message: deposit amount must be greater than 0.',
    );
  });
});

describe('Bank: blockhashes and slots', () => {
  it('a blockhash is valid for 150 blocks: lastValidBlockHeight = height + 150', () => {
    const bank = newBank();
    const payer = funded(bank);
    initTracker(bank, payer);
    const { blockhash, lastValidBlockHeight } = bank.latestBlockhash();
    expect(lastValidBlockHeight).toBe(bank.blockHeight + 150);
    bank.advanceSlots(150);
    expect(bank.blockHeight).toBe(lastValidBlockHeight);
    expect(bank.simulate(signed(bank, [deposit(payer, 1n)], [payer], blockhash), { checkBlockhash: true }).err).toBeNull();
    bank.advanceSlots(1);
    const expired = signed(bank, [deposit(payer, 2n)], [payer], blockhash);
    expect(bank.simulate(expired, { checkBlockhash: true }).err).toBe('BlockhashNotFound');
    bank.submit(expired, false);
    expect(bank.signatureStatus(expired.signature)).toBeUndefined();
    const unknown = signed(bank, [deposit(payer, 3n)], [payer], Keypair.generate().publicKey.toBase58());
    expect(bank.simulate(unknown, { checkBlockhash: true }).err).toBe('BlockhashNotFound');
  });

  it('slots pass on the timer, and a block holds every transaction that arrives within its slot; block height equals the slot', () => {
    vi.useFakeTimers();
    const bank = newBank(400);
    expect(bank.slot).toBe(0);
    vi.advanceTimersByTime(1_200);
    expect(bank.slot).toBe(3);
    const payer = funded(bank);
    initTracker(bank, payer);
    expect(bank.slot).toBe(3);
    const first = signed(bank, [deposit(payer, 1n)], [payer]);
    const second = signed(bank, [deposit(payer, 2n)], [payer]);
    bank.submit(first, false);
    bank.submit(second, false);
    const [a, b] = [bank.signatureStatus(first.signature)!, bank.signatureStatus(second.signature)!];
    expect([a.slot, b.slot]).toEqual([3, 3]);
    expect(b.seq).toBeGreaterThan(a.seq);
    vi.advanceTimersByTime(400);
    expect(bank.slot).toBe(4);
    expect(bank.blockHeight).toBe(bank.slot);
  });

  it('without a slot timer each landed transaction ends its slot', () => {
    const bank = newBank();
    const slot = bank.slot;
    funded(bank);
    expect(bank.slot).toBe(slot + 1);
  });

  it('while paused nothing lands and no slot passes; on resume waiting transactions land in order, in the open slot', () => {
    vi.useFakeTimers();
    const bank = newBank(400);
    const payer = funded(bank);
    initTracker(bank, payer);
    const { blockhash } = bank.latestBlockhash();
    bank.pause();
    const slot = bank.slot;
    const first = signed(bank, [deposit(payer, 1n)], [payer], blockhash);
    const second = signed(bank, [deposit(payer, 2n)], [payer], blockhash);
    bank.submit(first, false);
    bank.submit(second, false);
    vi.advanceTimersByTime(400 * 200);
    expect(bank.slot).toBe(slot);
    expect(bank.signatureStatus(first.signature)).toBeUndefined();
    expect(bank.isBlockhashValid(blockhash)).toBe(true);
    bank.resume();
    const [a, b] = [bank.signatureStatus(first.signature)!, bank.signatureStatus(second.signature)!];
    expect([a.slot, a.err, b.slot, b.err]).toEqual([slot, null, slot, null]);
    expect(b.seq).toBeGreaterThan(a.seq);
    expect(entryCount(bank)).toBe(2n);
  });
});

describe('Bank: transactions', () => {
  it('ignores ComputeBudget instructions', () => {
    const bank = newBank();
    const payer = funded(bank);
    initTracker(bank, payer);
    const tx = signed(
      bank,
      [
        ComputeBudgetProgram.setComputeUnitLimit({ units: 50_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1 }),
        deposit(payer, 7n),
      ],
      [payer],
    );
    bank.submit(tx, false);
    expect(bank.signatureStatus(tx.signature)?.err).toBeNull();
    expect(entryCount(bank)).toBe(1n);
  });

  it('runs v0 messages', () => {
    const bank = newBank();
    const payer = funded(bank);
    initTracker(bank, payer);
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: bank.latestBlockhash().blockhash,
      instructions: [deposit(payer, 9n)],
    }).compileToV0Message();
    const tx = new VersionedTransaction(message);
    tx.sign([payer]);
    const parsed = parseTransaction(tx.serialize());
    bank.submit(parsed, false);
    expect(bank.signatureStatus(parsed.signature)?.err).toBeNull();
    expect(entryCount(bank)).toBe(1n);
  });

  it('rejects v0 messages with address lookup tables with a clear error', () => {
    const payer = Keypair.generate();
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: Keypair.generate().publicKey.toBase58(),
      instructions: [deposit(payer, 9n)],
    }).compileToV0Message() as MessageV0;
    message.addressTableLookups.push({ accountKey: Keypair.generate().publicKey, writableIndexes: [0], readonlyIndexes: [] });
    const tx = new VersionedTransaction(message);
    tx.sign([payer]);
    expect(() => parseTransaction(tx.serialize())).toThrow(InvalidTransactionError);
    expect(() => parseTransaction(tx.serialize())).toThrow(/address lookup tables are not supported/);
  });

  it('a program that is not an executable account fails the load with InvalidProgramForExecution: committed fee-only (SIMD-0191, as Agave)', () => {
    const bank = newBank();
    const payer = funded(bank);
    const unknown = new TransactionInstruction({ programId: Keypair.generate().publicKey, keys: [], data: Buffer.alloc(0) });
    const notAProgram = new TransactionInstruction({ programId: funded(bank).publicKey, keys: [], data: Buffer.alloc(0) });
    for (const ix of [unknown, notAProgram]) {
      const tx = signed(bank, [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1 }), ix], [payer]);
      expect(bank.simulate(tx, { checkBlockhash: true })).toMatchObject({ err: 'InvalidProgramForExecution', unitsConsumed: 0 });
      bank.submit(tx, false);
      expect(bank.signatureStatus(tx.signature)?.err).toBe('InvalidProgramForExecution');
      expect(bank.transaction(tx.signature)).toMatchObject({ fee: 5_001n, computeUnitsConsumed: 0 });
    }
    // 5,000 a signature and ceil(1 x 203,000 / 1,000,000) = 1 of priority, twice; nothing else moved.
    expect(bank.account(payer.publicKey.toBase58())?.lamports).toBe(1_000_000_000n - 2n * 5_001n);
  });

  it('keeps rent states as Agave does: a fee payer may not pay its way below rent exemption; a transfer may not leave an account there', () => {
    const bank = newBank();
    const exempt = rentExemptMinimum(0);
    const lamportsOf = (key: PublicKey) => bank.account(key.toBase58())?.lamports;
    const land = (instructions: TransactionInstruction[], signers: Keypair[]) => {
      const tx = signed(bank, instructions, signers);
      const simulated = bank.simulate(tx, { checkBlockhash: true }).err;
      bank.submit(tx, false);
      expect(bank.signatureStatus(tx.signature)?.err ?? simulated).toEqual(simulated);
      return { simulated, landed: bank.signatureStatus(tx.signature) !== undefined };
    };
    const transfer = (from: Keypair, to: PublicKey, lamports: bigint) =>
      SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports });

    const nearlyExempt = funded(bank, exempt + 1_000n);
    const poor = funded(bank, 20_000n);
    const somebody = funded(bank).publicKey;
    for (const payer of [nearlyExempt, poor]) {
      expect(land([transfer(payer, somebody, 0n)], [payer])).toEqual({
        simulated: { InsufficientFundsForRent: { account_index: 0 } },
        landed: false,
      });
    }
    expect(lamportsOf(nearlyExempt.publicKey)).toBe(exempt + 1_000n);

    const payer = funded(bank);
    const fresh = Keypair.generate().publicKey;
    expect(land([transfer(payer, fresh, exempt - 1n)], [payer])).toEqual({
      simulated: { InsufficientFundsForRent: { account_index: 1 } },
      landed: true,
    });
    expect([lamportsOf(fresh), lamportsOf(payer.publicKey)]).toEqual([undefined, 1_000_000_000n - 5_000n]);
    expect(land([transfer(payer, fresh, exempt)], [payer]).simulated).toBeNull();
    // Below the minimum already: credited is allowed, debited is not; emptied is.
    expect(land([transfer(payer, poor.publicKey, 1n)], [payer]).simulated).toBeNull();
    expect(land([transfer(poor, somebody, 1n)], [payer, poor]).simulated).toEqual({ InsufficientFundsForRent: { account_index: 1 } });
    expect(land([transfer(poor, somebody, 20_001n)], [payer, poor]).simulated).toBeNull();
    // Emptied, the account is gone, as on a cluster; so is a fee payer the fee empties.
    expect(bank.account(poor.publicKey.toBase58())).toBeUndefined();
    const exactFee = funded(bank, 5_000n);
    expect(land([transfer(exactFee, somebody, 0n)], [exactFee])).toEqual({ simulated: null, landed: true });
    expect(bank.account(exactFee.publicKey.toBase58())).toBeUndefined();
  });

  it('verifies every ed25519 signature; a transaction with a bad one is dropped without a status', () => {
    const bank = newBank();
    const payer = funded(bank);
    const cosigner = funded(bank);
    initTracker(bank, payer);
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: bank.latestBlockhash().blockhash }).add(
      deposit(payer, 1n),
      deposit(cosigner, 1n),
    );
    tx.sign(payer, cosigner);
    expect(verifySignatures(parseTransaction(tx.serialize()))).toBe(true);
    const wire = tx.serialize();
    // Flip a bit of the second signature (after the 1-byte count and the first 64-byte signature).
    wire[1 + 64 + 10]! ^= 1;
    const tampered = parseTransaction(wire);
    expect(verifySignatures(tampered)).toBe(false);
    const before = lamports(bank, payer);
    bank.submit(tampered, false);
    expect(bank.signatureStatus(tampered.signature)).toBeUndefined();
    expect(lamports(bank, payer)).toBe(before);
  });

  it('rejects malformed and oversized transactions', () => {
    expect(() => parseTransaction(new Uint8Array([1, 2, 3]))).toThrow(InvalidTransactionError);
    expect(() => parseTransaction(new Uint8Array(1233))).toThrow(/too large/);
  });
});
