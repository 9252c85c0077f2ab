import { ComputeBudgetProgram, Connection, type Keypair, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
import { setLoadedAccountsDataSizeLimitInstruction } from '../../../src/chain/codec/compute-budget.js';
import { depositSetup, fundedKeypair, randomKey, rpc, send as sendInstructions, signedWire } from './helpers.js';

let node: DevnetNode;
let connection: Connection;
let setup: Awaited<ReturnType<typeof depositSetup>>;

beforeAll(async () => {
  node = await startDevnetNode({ name: 'source', chainId: 1, slotIntervalMs: 0 });
  connection = new Connection(node.url, 'confirmed');
  setup = await depositSetup(node, connection);
});

afterEach(() => {
  node.setComputeCostScale(1);
});

afterAll(async () => {
  await node.close();
});

const limit = (units: number) => ComputeBudgetProgram.setComputeUnitLimit({ units });
const price = (microLamports: number | bigint) => ComputeBudgetProgram.setComputeUnitPrice({ microLamports });
const budgetIx = (data: number[]) => new TransactionInstruction({ programId: ComputeBudgetProgram.programId, keys: [], data: Buffer.from(data) });

const funded = (lamports?: number) => fundedKeypair(node, lamports);

const transfer = (from: Keypair, lamports = 1_000_000) => SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: randomKey(), lamports });

async function simulate(instructions: TransactionInstruction[], payer: Keypair) {
  const wire = await signedWire(connection, instructions, [payer]);
  return (await rpc(node.url, 'simulateTransaction', [wire.toString('base64'), { encoding: 'base64' }])).body;
}

const send = (instructions: TransactionInstruction[], payer: Keypair, skipPreflight = false) =>
  sendInstructions(node, connection, instructions, payer, skipPreflight);

async function landed(signature: string) {
  return (await rpc(node.url, 'getTransaction', [signature, { encoding: 'base64' }])).body.result;
}

describe('compute metering', () => {
  it('a transfer with limit 20,000 at 1,000 micro-lamports consumes 450 CU and pays 5,020 lamports', async () => {
    const payer = funded();
    const instructions = [limit(20_000), price(1_000), transfer(payer)];
    expect((await simulate(instructions, payer)).result.value).toMatchObject({ err: null, unitsConsumed: 450 });
    const { result: signature } = await send(instructions, payer);
    expect(await landed(signature)).toMatchObject({ meta: { err: null, fee: 5_020, computeUnitsConsumed: 450 } });
    expect(await connection.getBalance(payer.publicKey)).toBe(1_000_000_000 - 1_000_000 - 5_020);
    expect(node.feesPaid(payer.publicKey)).toEqual({ transactions: 1, base: 5_000n, priority: 20n, total: 5_020n });
  });

  it('a limit below what the first instruction needs fails it with ComputationalBudgetExceeded; landed, the fee is paid and nothing else happens', async () => {
    const payer = funded();
    const instructions = [limit(100), price(1_000), transfer(payer)];
    const { error } = await send(instructions, payer);
    expect(error).toMatchObject({
      code: -32002,
      message: 'Transaction simulation failed: Error processing Instruction 0: Computational budget exceeded',
      data: { err: { InstructionError: [0, 'ComputationalBudgetExceeded'] }, unitsConsumed: 100 },
    });
    const { result: signature } = await send(instructions, payer, true);
    expect(await landed(signature)).toMatchObject({
      meta: { err: { InstructionError: [0, 'ComputationalBudgetExceeded'] }, fee: 5_001, computeUnitsConsumed: 100 },
    });
    expect(await connection.getBalance(payer.publicKey)).toBe(1_000_000_000 - 5_001);
  });

  it('meters the bridge program: 10,000 CU a deposit by default; at a scale set over the admin JSON-RPC it passes the default limit', async () => {
    const payer = funded();
    const programId = node.programId.toBase58();
    const ok = (await simulate([setup.deposit(1n, payer)], payer)).result.value;
    expect(ok).toMatchObject({ err: null, unitsConsumed: 10_000 });
    expect(ok.logs).toContain(`Program ${programId} consumed 10000 of 200000 compute units`);

    const upgraded = await rpc(node.url, 'devnet_setComputeCostScale', [30]);
    expect(upgraded.body.result).toEqual({
      scale: 30,
      units: { ack_deposit: 720_000, ack_withdraw: 570_000, cleanup_deposit: 480_000, other: 300_000 },
    });
    const over = (await simulate([setup.deposit(1n, payer)], payer)).result.value;
    expect(over).toEqual(
      expect.objectContaining({
        err: { InstructionError: [0, 'ComputationalBudgetExceeded'] },
        unitsConsumed: 200_000,
        logs: [
          `Program ${programId} invoke [1]`,
          `Program ${programId} consumed 200000 of 200000 compute units`,
          `Program ${programId} failed: exceeded CUs meter at BPF instruction`,
        ],
      }),
    );
    const enough = (await simulate([limit(300_150), setup.deposit(1n, payer)], payer)).result.value;
    expect(enough).toMatchObject({ err: null, unitsConsumed: 300_150 });
    expect(enough.logs).toContain(`Program ${programId} consumed 300000 of 300000 compute units`);
    expect((await rpc(node.url, 'devnet_getComputeCosts')).body.result.scale).toBe(30);
  });

  it('a failing bridge instruction has consumed its cost', async () => {
    const payer = funded();
    const failed = (await simulate([limit(50_000), setup.deposit(0n, payer)], payer)).result.value;
    expect(failed).toMatchObject({ err: { InstructionError: [1, { Custom: 6011 }] }, unitsConsumed: 10_150 });
  });

  it('refuses a cost scale outside (0, 100] with -32602 naming it', async () => {
    for (const scale of [0, -1, 101, 'x']) {
      const { body } = await rpc(node.url, 'devnet_setComputeCostScale', [scale]);
      expect(body.error.code).toBe(-32602);
      expect(body.error.message).toMatch(/scale/i);
    }
  });
});

describe('the cost scale at start', () => {
  it('startDevnetNode({ computeCostScale }) meters the program at that scale and refuses one outside (0, 100]', async () => {
    const upgraded = await startDevnetNode({ name: 'target', chainId: 2, slotIntervalMs: 0, computeCostScale: 6 });
    try {
      expect(upgraded.bank.computeCosts).toEqual({
        scale: 6,
        units: { ack_deposit: 144_000, ack_withdraw: 114_000, cleanup_deposit: 96_000, other: 60_000 },
      });
    } finally {
      await upgraded.close();
    }
    expect(node.setComputeCostScale(1.1).units).toEqual({ ack_deposit: 26_400, ack_withdraw: 20_900, cleanup_deposit: 17_600, other: 11_000 });
    await expect(startDevnetNode({ name: 'target', chainId: 2, slotIntervalMs: 0, computeCostScale: 0 })).rejects.toMatchObject({
      code: 'DEVNET__INVALID_OPTION',
      context: { option: 'computeCostScale' },
    });
  });
});

describe('compute budget instructions', () => {
  it('clamps a limit above 1,400,000 and charges the priority on the clamped limit', async () => {
    const payer = funded(10_000_000);
    const { result: signature } = await send([limit(2_000_000), price(1_000_000), transfer(payer)], payer);
    expect(await landed(signature)).toMatchObject({ meta: { fee: 5_000 + 1_400_000 } });
  });

  it('without SetComputeUnitLimit, reserves 3,000 per builtin instruction and 200,000 per program instruction', async () => {
    const payer = funded(10_000_000);
    // Two builtins: a limit of 6,000 at 1,000,000 micro-lamports is 6,000 lamports of priority.
    const builtins = await send([price(1_000_000), transfer(payer)], payer);
    expect(await landed(builtins.result)).toMatchObject({ meta: { fee: 11_000 } });
    const mixed = await send([price(1_000), setup.deposit(1n, payer)], payer);
    expect(await landed(mixed.result)).toMatchObject({ meta: { fee: 5_000 + 203 } });
  });

  it('rounds the priority fee up to a whole lamport', async () => {
    const payer = funded();
    const { result: signature } = await send([limit(1_000), price(1), transfer(payer)], payer);
    expect(await landed(signature)).toMatchObject({ meta: { fee: 5_001 } });
  });

  it('refuses a duplicate or unreadable budget instruction as an invalid transaction (-32602), with or without preflight', async () => {
    const payer = funded();
    const cases: Array<[TransactionInstruction[], string]> = [
      [[limit(1_000), limit(2_000), transfer(payer)], 'invalid transaction: Transaction contains a duplicate instruction (1) that is not allowed'],
      [[price(1), transfer(payer), price(2)], 'invalid transaction: Transaction contains a duplicate instruction (2) that is not allowed'],
      [[budgetIx([2, 1, 2]), transfer(payer)], 'invalid transaction: Error processing Instruction 0: invalid instruction data'],
      [[transfer(payer), budgetIx([0])], 'invalid transaction: Error processing Instruction 1: invalid instruction data'],
      [[budgetIx([9, 0, 0, 0, 0])], 'invalid transaction: Error processing Instruction 0: invalid instruction data'],
      [[budgetIx([])], 'invalid transaction: Error processing Instruction 0: invalid instruction data'],
    ];
    for (const [instructions, message] of cases) {
      for (const skipPreflight of [false, true]) {
        const { error } = await send(instructions, payer, skipPreflight);
        expect(error).toEqual({ code: -32602, message });
      }
    }
    // Trailing bytes after the field are ignored, as borsh's unchecked read ignores them.
    expect((await simulate([budgetIx([2, 0x10, 0x27, 0, 0, 0xff]), transfer(payer)], payer)).result.value).toMatchObject({
      err: null,
      unitsConsumed: 300,
    });
  });

  it('refuses a heap frame out of range before any fee: a preflight failure, and nothing lands without preflight', async () => {
    const payer = funded();
    const heap = (bytes: number) => budgetIx([1, bytes & 0xff, (bytes >> 8) & 0xff, (bytes >> 16) & 0xff, 0]);
    const { error } = await send([transfer(payer), heap(1_000)], payer);
    expect(error).toMatchObject({ code: -32002, data: { err: { InstructionError: [1, 'InvalidInstructionData'] }, unitsConsumed: 0 } });
    const { result: signature } = await send([transfer(payer), heap(1_000)], payer, true);
    expect((await connection.getSignatureStatuses([signature])).value[0]).toBeNull();
    expect(await connection.getBalance(payer.publicKey)).toBe(1_000_000_000);
    expect((await simulate([heap(64 * 1024), transfer(payer)], payer)).result.value.err).toBeNull();
    const zeroData = await simulate([budgetIx([4, 0, 0, 0, 0]), transfer(payer)], payer);
    expect(zeroData.result.value.err).toBe('InvalidLoadedAccountsDataSizeLimit');
  });

  it('a transaction that loads more account data than its SetLoadedAccountsDataSizeLimit: refused in preflight, fee-only without it (SIMD-0191)', async () => {
    const payer = funded();
    // The payer (64 + 0 bytes), a fresh recipient (absent: 0), the System (64 + 14) and ComputeBudget (64 + 22) programs.
    const loads = 228;
    expect((await simulate([setLoadedAccountsDataSizeLimitInstruction(loads), transfer(payer)], payer)).result.value).toMatchObject({
      err: null,
      unitsConsumed: 300,
    });
    const over = [setLoadedAccountsDataSizeLimitInstruction(loads - 1), transfer(payer)];
    const { error } = await send(over, payer);
    expect(error).toMatchObject({
      code: -32002,
      message: 'Transaction simulation failed: Transaction exceeded max loaded accounts data size cap',
      data: { err: 'MaxLoadedAccountsDataSizeExceeded', unitsConsumed: 0 },
    });
    const { result: signature } = await send(over, payer, true);
    expect((await connection.getSignatureStatuses([signature])).value[0]).toMatchObject({ err: 'MaxLoadedAccountsDataSizeExceeded' });
    expect(await connection.getBalance(payer.publicKey)).toBe(1_000_000_000 - 5_000);
    expect((await landed(signature)).meta).toMatchObject({ fee: 5_000, computeUnitsConsumed: 0, err: 'MaxLoadedAccountsDataSizeExceeded' });
  });

  it('refuses a payer that can pay the base fee but not the priority (InsufficientFundsForFee): nothing lands', async () => {
    const payer = funded(10_000);
    const instructions = [
      limit(10_000),
      price(1_000_000),
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 0 }),
    ];
    const { error } = await send(instructions, payer);
    expect(error).toMatchObject({ code: -32002, data: { err: 'InsufficientFundsForFee' } });
    const { result: signature } = await send(instructions, payer, true);
    expect((await connection.getSignatureStatuses([signature])).value[0]).toBeNull();
    expect(await connection.getBalance(payer.publicKey)).toBe(10_000);
  });
});
