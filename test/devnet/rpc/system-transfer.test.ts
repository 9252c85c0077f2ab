import { SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { SYSTEM_PROGRAM_ID } from '../../../devnet/program/store.js';
import { fundedKeypair, randomKey, rpc, sendWire, signedWire, testNode } from './helpers.js';

const chain = testNode('file');

const funded = (lamports: number) => fundedKeypair(chain.node, lamports);
const send = (wire: Buffer, skipPreflight = false) => sendWire(chain.node.url, wire, skipPreflight);

describe('System program transfer over JSON-RPC', () => {
  it('moves lamports, creates the recipient as a System account, charges 5,000 per signature and logs as Agave', async () => {
    const from = funded(10_000_000);
    const to = randomKey();
    const wire = await signedWire(
      chain.connection,
      [SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports: 1_000_000 })],
      [from],
    );
    const simulated = await rpc(chain.node.url, 'simulateTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
    expect(simulated.body.result.value).toMatchObject({
      err: null,
      logs: [`Program ${SYSTEM_PROGRAM_ID} invoke [1]`, `Program ${SYSTEM_PROGRAM_ID} success`],
      unitsConsumed: 150,
    });
    const { body } = await send(wire);
    const { value } = await chain.connection.getSignatureStatuses([body.result]);
    expect(value[0]).toMatchObject({ err: null, confirmationStatus: 'finalized' });
    expect(await chain.connection.getBalance(from.publicKey)).toBe(10_000_000 - 1_000_000 - 5_000);
    expect(await chain.connection.getBalance(to)).toBe(1_000_000);
    expect((await chain.connection.getAccountInfo(to))?.owner.toBase58()).toBe(SYSTEM_PROGRAM_ID);
  });

  it('refuses a transfer above the balance in preflight with {"InstructionError":[0,{"Custom":1}]} and Agave\'s log', async () => {
    const from = funded(2_000_000);
    const wire = await signedWire(
      chain.connection,
      [SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: randomKey(), lamports: 3_000_000 })],
      [from],
    );
    const { body } = await send(wire);
    expect(body.error).toMatchObject({
      code: -32002,
      message: 'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1',
      data: {
        err: { InstructionError: [0, { Custom: 1 }] },
        logs: [
          `Program ${SYSTEM_PROGRAM_ID} invoke [1]`,
          // The fee is taken before the instruction runs.
          'Transfer: insufficient lamports 1995000, need 3000000',
          `Program ${SYSTEM_PROGRAM_ID} failed: custom program error: 0x1`,
        ],
        unitsConsumed: 150,
      },
    });
  });

  it('lands a failing transfer sent without preflight: the fee is paid, no lamports move', async () => {
    const from = funded(2_000_000);
    const to = randomKey();
    const wire = await signedWire(
      chain.connection,
      [SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports: 3_000_000 })],
      [from],
    );
    const { body } = await send(wire, true);
    const { value } = await chain.connection.getSignatureStatuses([body.result]);
    expect(value[0]?.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(await chain.connection.getBalance(from.publicKey)).toBe(2_000_000 - 5_000);
    expect(await chain.connection.getAccountInfo(to)).toBeNull();
  });

  it('fails as the runtime does: unsigned source, read-only recipient, short data, missing account, another System instruction', async () => {
    const payer = funded(10_000_000);
    const other = funded(10_000_000);
    const transfer = (keys: TransactionInstruction['keys'], data: Buffer) =>
      new TransactionInstruction({ programId: SystemProgram.programId, keys, data });
    const amount = Buffer.from([2, 0, 0, 0, 64, 66, 15, 0, 0, 0, 0, 0]);
    const recipient = randomKey();
    const cases: Array<[TransactionInstruction, string]> = [
      [
        transfer(
          [
            { pubkey: other.publicKey, isSigner: false, isWritable: true },
            { pubkey: recipient, isSigner: false, isWritable: true },
          ],
          amount,
        ),
        'MissingRequiredSignature',
      ],
      [
        transfer(
          [
            { pubkey: payer.publicKey, isSigner: true, isWritable: true },
            { pubkey: recipient, isSigner: false, isWritable: false },
          ],
          amount,
        ),
        'ReadonlyLamportChange',
      ],
      [
        transfer(
          [
            { pubkey: payer.publicKey, isSigner: true, isWritable: true },
            { pubkey: recipient, isSigner: false, isWritable: true },
          ],
          amount.subarray(0, 8),
        ),
        'InvalidInstructionData',
      ],
      [transfer([{ pubkey: payer.publicKey, isSigner: true, isWritable: true }], amount), 'NotEnoughAccountKeys'],
      // UpgradeNonceAccount (12): a variant the devnet does not model.
      [transfer([{ pubkey: payer.publicKey, isSigner: true, isWritable: true }], Buffer.from([12, 0, 0, 0])), 'InvalidInstructionData'],
    ];
    for (const [ix, detail] of cases) {
      const wire = await signedWire(chain.connection, [ix], [payer]);
      const { body } = await rpc(chain.node.url, 'simulateTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
      expect(body.result.value.err, detail).toEqual({ InstructionError: [0, detail] });
    }
  });

  it('removes an account that a transfer leaves without lamports, as a cluster does', async () => {
    const from = funded(2_000_000);
    const to = randomKey();
    const wire = await signedWire(
      chain.connection,
      [SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports: 2_000_000 - 5_000 })],
      [from],
    );
    const { body } = await send(wire);
    expect((await chain.connection.getSignatureStatuses([body.result])).value[0]?.err).toBeNull();
    expect(await chain.connection.getAccountInfo(from.publicKey)).toBeNull();
    expect(await chain.connection.getBalance(to)).toBe(1_995_000);
  });

  it('moves lamports from a source to itself without changing its balance beyond the fee', async () => {
    const from = funded(3_000_000);
    const wire = await signedWire(
      chain.connection,
      [SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: from.publicKey, lamports: 1_000_000 })],
      [from],
    );
    const { body } = await send(wire);
    expect(typeof body.result).toBe('string');
    expect(await chain.connection.getBalance(from.publicKey)).toBe(3_000_000 - 5_000);
  });
});
