import { Keypair, SystemProgram } from '@solana/web3.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mulberry32 } from '../../../devnet/faults/faults.js';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
import { rpc } from '../rpc/helpers.js';
import { DevnetRuntime } from './devnet-runtime.js';
import { LiteSvmRuntime } from './litesvm-runtime.js';
import { signedWire, syncBlockhash } from './signed-pair.js';

/**
 * The commitment banks against Agave's runtime. LiteSVM is one bank without commitments: after
 * each transaction its balances are the state at the end of the slot the devnet landed it in. A
 * confirmed or finalized read of the devnet must answer, for the slot its context names, exactly
 * the balances LiteSVM had after the transactions of that slot and before (an account without
 * lamports absent), whatever the processed head has done since. Transfers between a few keys,
 * one of them emptied and recreated now and then, with 0 to 3 empty slots between them.
 */

const LAGS = { confirmedLagSlots: 2, finalizedLagSlots: 5 };
const SOL = 1_000_000_000n;
const FEE = 5_000n;
const STEPS = 30;

let node: DevnetNode;
let devnet: DevnetRuntime;
let litesvm: LiteSvmRuntime;
const [alice, bob, carol] = [Keypair.generate(), Keypair.generate(), Keypair.generate()];
const accounts = [alice, bob, carol].map((key) => key.publicKey.toBase58());

beforeAll(async () => {
  node = await startDevnetNode({ name: 'banks-conformance', chainId: 1, slotIntervalMs: 0, commitmentLags: LAGS });
  devnet = new DevnetRuntime(node);
  litesvm = new LiteSvmRuntime();
  node.airdrop(alice.publicKey, 10n * SOL);
  node.airdrop(bob.publicKey, 10n * SOL);
  litesvm.fund(
    new Map([
      [accounts[0]!, 10n * SOL],
      [accounts[1]!, 10n * SOL],
    ]),
  );
  node.advanceSlots(LAGS.finalizedLagSlots + 1);
});

afterAll(async () => {
  await node.close();
});

type Balances = Record<string, bigint | null>;

async function bankBalances(commitment: string): Promise<{ slot: number; balances: Balances }> {
  const { context, value } = (await rpc(node.url, 'getMultipleAccounts', [accounts, { encoding: 'base64', commitment }])).body.result;
  return { slot: context.slot, balances: Object.fromEntries(accounts.map((key, i) => [key, value[i] === null ? null : BigInt(value[i].lamports)])) };
}

it('a confirmed or finalized read answers the balances Agave runtime had at the end of that bank slot', async () => {
  const random = mulberry32(47);
  // LiteSVM's balances after each slot that landed something: what a bank at that slot must show.
  const history: Array<{ slot: number; balances: Balances }> = [
    { slot: node.slot - LAGS.finalizedLagSlots, balances: { [accounts[0]!]: 10n * SOL, [accounts[1]!]: 10n * SOL, [accounts[2]!]: null } },
  ];
  const expectedAt = (slot: number) => history.filter((state) => state.slot <= slot).at(-1)!.balances;
  let olderThanHead = 0;
  for (let step = 0; step < STEPS; step += 1) {
    const carolHolds = history.at(-1)!.balances[accounts[2]!] ?? 0n;
    const blockhash = await syncBlockhash(devnet, litesvm);
    const pay = (from: Keypair, to: Keypair, lamports: bigint) =>
      signedWire(from, [SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to.publicKey, lamports })], blockhash);
    const payer = random() < 0.5 ? alice : bob;
    // Carol, when funded, sometimes sends back all but the fee: her account is gone (recreated later).
    const bytes =
      carolHolds > SOL && random() < 0.4
        ? pay(carol, alice, carolHolds - FEE)
        : pay(payer, random() < 0.5 ? carol : payer === alice ? bob : alice, BigInt(1 + Math.floor(random() * 2_000_000_000)));
    // Without preflight, so that the bank decides what lands (a failed transfer lands with its fee), as LiteSVM does.
    const sent = await rpc(node.url, 'sendTransaction', [Buffer.from(bytes).toString('base64'), { encoding: 'base64', skipPreflight: true }]);
    expect(sent.body.error).toBeUndefined();
    const outcome = litesvm.run(bytes, accounts);
    const status = (await rpc(node.url, 'getSignatureStatuses', [[sent.body.result]])).body.result.value[0];
    expect(status !== null, `step ${step}: landed on the devnet as on LiteSVM`).toBe(outcome.landed);
    if (status !== null) history.push({ slot: status.slot, balances: outcome.balances });
    node.advanceSlots(Math.floor(random() * 4));
    const head = (await bankBalances('processed')).balances;
    for (const commitment of ['processed', 'confirmed', 'finalized']) {
      const bank = await bankBalances(commitment);
      expect(bank.balances, `${commitment} bank at slot ${bank.slot}, step ${step}`).toEqual(expectedAt(bank.slot));
      if (JSON.stringify(bank.balances, bigints) !== JSON.stringify(head, bigints)) olderThanHead += 1;
    }
  }
  // The older banks did answer older states, not the head's; Carol's account was closed and recreated.
  expect(olderThanHead).toBeGreaterThan(STEPS / 2);
  const carolSeen = history.map((state) => state.balances[accounts[2]!] !== null);
  expect(carolSeen.some((held, i) => i > 0 && carolSeen[i - 1] === true && !held)).toBe(true);
});

const bigints = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);
