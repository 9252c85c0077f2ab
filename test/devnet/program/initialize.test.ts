import { describe, expect, it } from 'vitest';
import { encodeInstructionData } from '../../../src/chain/codec/instructions.js';
import { ACCOUNT_DISCRIMINATORS, trackerAccountSize } from '../../../src/chain/codec/layout.js';
import { depositTrackerAddress, withdrawTrackerAddress } from '../../../src/chain/pda.js';
import { maxTrackerCapacity } from '../../../src/chain/codec/layout.js';
import { SYSTEM_PROGRAM_ID, rentExemptMinimum } from '../../../devnet/program/store.js';
import {
  BridgeFixture,
  PROGRAM_ID,
  ProgramChain,
  SOURCE_CHAIN_ID,
  TARGET_CHAIN_ID,
  expectProgramError,
  newKey,
  readonly,
  signer,
  writable,
} from './harness.js';

const depositTracker = depositTrackerAddress(PROGRAM_ID, TARGET_CHAIN_ID);

function initDeposit(
  chain: ProgramChain,
  params: { capacity?: bigint; threshold?: number; authorities?: string[] } = {},
  metas?: ReturnType<typeof signer>[],
) {
  const governance = newKey();
  chain.run(
    {
      name: 'initialize_deposit_tracker',
      targetChainId: TARGET_CHAIN_ID,
      capacity: params.capacity ?? 4n,
      threshold: params.threshold ?? 1,
      authorities: params.authorities ?? [newKey().toBase58()],
    },
    metas ?? [signer(governance), writable(depositTracker)],
  );
  return governance;
}

describe('initialize_deposit_tracker / initialize_withdraw_tracker', () => {
  it('creates the DepositTracker at its PDA with (own chain id, argument), the signer as governance and zero votes', () => {
    const fixture = new BridgeFixture({ authorities: 3, threshold: 2, capacity: 16n });
    const header = fixture.depositHeader();
    expect(header).toMatchObject({
      sourceChainId: SOURCE_CHAIN_ID,
      targetChainId: TARGET_CHAIN_ID,
      threshold: 2,
      authorityCount: 3,
      entryCount: 0n,
      capacity: 16n,
      settledPrefix: 0n,
      generation: 0n,
      governance: fixture.governance.toBase58(),
      authorities: fixture.authorities.map((key) => key.toBase58()),
    });
    expect(header.votes).toEqual(Array.from({ length: 3 }, () => ({ nextIndex: 0n, lastVote: 'None' })));
    const account = fixture.source.accounts.get(fixture.depositTracker.toBase58())!;
    expect(account.owner).toBe(PROGRAM_ID.toBase58());
    expect(account.data.length).toBe(trackerAccountSize('DepositTracker', 16));
    expect(account.data.subarray(0, 8)).toEqual(ACCOUNT_DISCRIMINATORS.DepositTracker);
    expect(account.lamports).toBe(rentExemptMinimum(account.data.length));
    // Entries are zero until used.
    expect(account.data.subarray(848).every((byte) => byte === 0)).toBe(true);
  });

  it('creates the WithdrawTracker with (argument, own chain id)', () => {
    const fixture = new BridgeFixture({ capacity: 8n });
    const header = fixture.withdrawHeader();
    expect(header.sourceChainId).toBe(SOURCE_CHAIN_ID);
    expect(header.targetChainId).toBe(TARGET_CHAIN_ID);
    expect(fixture.target.data(fixture.withdrawTracker).length).toBe(trackerAccountSize('WithdrawTracker', 8));
  });

  it('keeps the lamports of a system account already funded at the PDA', () => {
    const chain = new ProgramChain(SOURCE_CHAIN_ID);
    const funded = rentExemptMinimum(trackerAccountSize('DepositTracker', 4)) + 7n;
    chain.accounts.set(depositTracker.toBase58(), { lamports: funded, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false });
    initDeposit(chain);
    expect(chain.accounts.get(depositTracker.toBase58())!.lamports).toBe(funded);
  });

  it('reports 0 for an account initialized twice', () => {
    const chain = new ProgramChain(SOURCE_CHAIN_ID);
    initDeposit(chain);
    const error = expectProgramError(chain, 'AccountAlreadyInitialized', () => initDeposit(chain));
    expect(error.code).toBe(0);
  });

  it('rejects wrong accounts with InvalidAccount: not signed, tracker read-only, wrong PDA, missing', () => {
    const chain = new ProgramChain(SOURCE_CHAIN_ID);
    const governance = newKey();
    const cases = [
      [{ address: governance.toBase58(), isSigner: false, isWritable: true }, writable(depositTracker)],
      [signer(governance), readonly(depositTracker)],
      [signer(governance), writable(depositTrackerAddress(PROGRAM_ID, 9))],
      [signer(governance), writable(withdrawTrackerAddress(PROGRAM_ID, TARGET_CHAIN_ID))],
      [signer(governance)],
    ];
    for (const metas of cases) {
      const error = expectProgramError(chain, 'InvalidAccount', () => initDeposit(chain, {}, metas));
      expect(error.code).toBe(6008);
    }
  });

  it('checks accounts before "initialized twice" and that before the parameters', () => {
    const chain = new ProgramChain(SOURCE_CHAIN_ID);
    initDeposit(chain);
    expectProgramError(chain, 'AccountAlreadyInitialized', () => initDeposit(chain, { threshold: 0 }));
    expectProgramError(chain, 'InvalidAccount', () => initDeposit(chain, { threshold: 0 }, [signer(newKey()), readonly(depositTracker)]));
  });

  it('reports 2500 for invalid parameters', () => {
    const chain = new ProgramChain(SOURCE_CHAIN_ID);
    const key = newKey().toBase58();
    const seventeen = Array.from({ length: 17 }, () => newKey().toBase58());
    const invalid = [
      { authorities: [] },
      { authorities: seventeen, threshold: 1 },
      { threshold: 0 },
      { authorities: [key], threshold: 2 },
      { authorities: [key, key], threshold: 1 },
      { authorities: ['11111111111111111111111111111111'] },
      { capacity: 0n },
      { capacity: BigInt(maxTrackerCapacity('DepositTracker') + 1) },
    ];
    for (const params of invalid) {
      const error = expectProgramError(chain, 'RequireViolated', () => initDeposit(chain, params));
      expect(error.code).toBe(2500);
    }
  });

  it('accepts 16 authorities and the largest capacity that fits in one account', () => {
    const chain = new ProgramChain(SOURCE_CHAIN_ID);
    const authorities = Array.from({ length: 16 }, () => newKey().toBase58());
    initDeposit(chain, { authorities, threshold: 16, capacity: BigInt(maxTrackerCapacity('DepositTracker')) });
    expect(chain.data(depositTracker).length).toBeLessThanOrEqual(10 * 1024 * 1024);
  });
});

describe('framework errors of instruction data', () => {
  const chain = new ProgramChain(SOURCE_CHAIN_ID);
  const metas = [signer(newKey()), writable(depositTracker)];

  it('reports 100 for data shorter than 8 bytes', () => {
    expect(expectProgramError(chain, 'InstructionMissing', () => chain.run(new Uint8Array(7), metas)).code).toBe(100);
  });

  it('reports 101 for an unknown discriminator', () => {
    expect(expectProgramError(chain, 'InstructionFallbackNotFound', () => chain.run(new Uint8Array(8).fill(9), metas)).code).toBe(101);
  });

  it('reports 102 for trailing bytes, short arguments and a bool that is not 0 or 1', () => {
    const cleanup = encodeInstructionData({ name: 'cleanup_deposit', index: 0n });
    const trailing = Uint8Array.from([...cleanup, 0]);
    const short = cleanup.subarray(0, cleanup.length - 1);
    const ack = encodeInstructionData({ name: 'ack_withdraw', index: 0n, approve: true, result: { tag: 1, reason: 0, amount: 1n } });
    const badBool = ack.slice();
    badBool[16] = 2;
    for (const data of [trailing, short, badBool]) {
      expect(expectProgramError(chain, 'InstructionDidNotDeserialize', () => chain.run(data, metas)).code).toBe(102);
    }
  });
});
