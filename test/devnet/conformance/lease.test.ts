import { Keypair, NONCE_ACCOUNT_LENGTH, NonceAccount } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
import { advanceLeaseInstructions, leaseAddress, releaseLeaseInstructions, takeLeaseInstructions } from '../../../src/chain/lease-account.js';
import { NONCE_ACCOUNT_RENT_LAMPORTS } from '../../../src/chain/nonce-account.js';
import { durableNonceOf } from '../rpc/helpers.js';
import { DevnetRuntime } from './devnet-runtime.js';
import { LiteSvmRuntime } from './litesvm-runtime.js';
import { signedWire, syncBlockhash } from './signed-pair.js';
import { describeOutcome, type Outcome } from './outcome.js';

/**
 * The signing lease's instructions (src/chain/lease-account.ts, docs/chain-client.md "The
 * lease") on the devnet and on Agave's runtime (LiteSVM), the same signed bytes to both: taking
 * a free lease (AllocateWithSeed, the rent, InitializeNonceAccount), a second taking refused
 * (AccountAlreadyInUse: of two racing instances one wins), taking over against the value seen (a
 * durable-nonce transaction: the second version is refused without a fee), releasing (the whole
 * balance withdrawn closes the account), and taking an address someone pre-funded. Each taking
 * carries an instance's mark (a read-only account after the System instruction's own): the
 * runtime ignores it, and two instances never sign the same bytes.
 */

const SOL = 1_000_000_000n;
const SOURCE_CHAIN_ID = 7;
const RENT = BigInt(NONCE_ACCOUNT_RENT_LAMPORTS);

let node: DevnetNode;
let devnet: DevnetRuntime;
let litesvm: LiteSvmRuntime;
const authority = Keypair.generate();
const lease = leaseAddress(authority.publicKey, SOURCE_CHAIN_ID);
/** Two instances' marks: their lease transactions differ in the read-only account the System instruction carries after its own. */
const markA = Keypair.generate().publicKey;
const markB = Keypair.generate().publicKey;
let accounts: string[];

beforeAll(async () => {
  node = await startDevnetNode({ name: 'lease-conformance', chainId: 1, slotIntervalMs: 0 });
  devnet = new DevnetRuntime(node);
  litesvm = new LiteSvmRuntime();
  accounts = [authority.publicKey.toBase58(), lease.toBase58()];
  node.airdrop(authority.publicKey, 10n * SOL);
  litesvm.fund(new Map([[authority.publicKey.toBase58(), 10n * SOL]]));
});

afterAll(async () => {
  await node.close();
});

async function expectSame(bytes: Uint8Array): Promise<Outcome> {
  const { recorded: _recorded, ...onDevnet } = await devnet.run(bytes, accounts);
  const onLitesvm = litesvm.run(bytes, accounts);
  expect(describeOutcome(onDevnet)).toBe(describeOutcome(onLitesvm));
  return onLitesvm;
}

const storedNonce = (data: Uint8Array | undefined) => NonceAccount.fromAccountData(Buffer.from(data ?? new Uint8Array(NONCE_ACCOUNT_LENGTH))).nonce;

describe('the signing lease: the devnet and Agave runtime (LiteSVM) agree', () => {
  it('taking a free lease lands: an 80-byte nonce account of the authority, the rent paid', async () => {
    const blockhash = await syncBlockhash(devnet, litesvm);
    const outcome = await expectSame(signedWire(authority, takeLeaseInstructions(authority.publicKey, SOURCE_CHAIN_ID, markA), blockhash));
    expect(outcome).toMatchObject({ landed: true, error: null, fee: 5_000n });
    expect(outcome.balances[lease.toBase58()]).toBe(RENT);
    const data = await devnet.accountData(lease.toBase58());
    expect(data).toEqual(litesvm.accountData(lease.toBase58()));
    expect(storedNonce(data)).toBe(durableNonceOf(blockhash));
  });

  it('a second taking (the instance that lost the race) is refused: AccountAlreadyInUse, the fee paid', async () => {
    node.advanceSlots(1);
    const outcome = await expectSame(
      signedWire(authority, takeLeaseInstructions(authority.publicKey, SOURCE_CHAIN_ID, markB), await syncBlockhash(devnet, litesvm)),
    );
    expect(outcome).toMatchObject({ landed: true, error: { err: { InstructionError: [0, { Custom: 0 }] } }, fee: 5_000n });
  });

  it("taking over against the value seen lands once; another instance's (its own mark, so other bytes) signed against it is refused without a fee", async () => {
    const value = storedNonce(await devnet.accountData(lease.toBase58()));
    node.advanceSlots(1);
    await syncBlockhash(devnet, litesvm);
    const first = await expectSame(signedWire(authority, advanceLeaseInstructions(authority.publicKey, SOURCE_CHAIN_ID, markA), value));
    expect(first).toMatchObject({ landed: true, error: null, fee: 5_000n });
    // LiteSVM takes the advanced value from the old nonce, Agave from the bank (nonce.test.ts): both get the devnet's.
    litesvm.setSystemAccount(lease.toBase58(), RENT, (await devnet.accountData(lease.toBase58()))!);
    const second = await expectSame(signedWire(authority, advanceLeaseInstructions(authority.publicKey, SOURCE_CHAIN_ID, markB), value));
    expect(second).toMatchObject({ landed: false, error: { err: 'BlockhashNotFound' }, fee: 0n });
  });

  it('releasing withdraws the whole balance and closes the account', async () => {
    node.advanceSlots(1);
    const outcome = await expectSame(
      signedWire(authority, releaseLeaseInstructions(authority.publicKey, SOURCE_CHAIN_ID, Number(RENT)), await syncBlockhash(devnet, litesvm)),
    );
    expect(outcome).toMatchObject({ landed: true, error: null, fee: 5_000n });
    expect(outcome.balances[lease.toBase58()]).toBeNull();
    expect(await devnet.accountData(lease.toBase58())).toBeUndefined();
  });

  it('an address someone pre-funded is taken all the same: their lamports stay in the lease and come back on release', async () => {
    node.airdrop(lease, 1_000n);
    litesvm.fund(new Map([[lease.toBase58(), 1_000n]]));
    node.advanceSlots(1);
    const outcome = await expectSame(
      signedWire(authority, takeLeaseInstructions(authority.publicKey, SOURCE_CHAIN_ID, markA), await syncBlockhash(devnet, litesvm)),
    );
    expect(outcome).toMatchObject({ landed: true, error: null, fee: 5_000n });
    expect(outcome.balances[lease.toBase58()]).toBe(RENT + 1_000n);
    node.advanceSlots(1);
    const released = await expectSame(
      signedWire(
        authority,
        releaseLeaseInstructions(authority.publicKey, SOURCE_CHAIN_ID, Number(RENT + 1_000n)),
        await syncBlockhash(devnet, litesvm),
      ),
    );
    expect(released).toMatchObject({ landed: true, error: null });
    expect(released.balances[lease.toBase58()]).toBeNull();
  });
});
