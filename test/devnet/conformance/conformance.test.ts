import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
import { checkProperty, propertyProfile } from '../../../property-tests/support/profile.js';
import { SYSTEM_PROGRAM_ID } from '../../../devnet/program/store.js';
import {
  caseAccounts,
  caseFee,
  conformanceCase,
  describeCase,
  freshKeys,
  initialBalances,
  NONCE_RENT,
  nonceAccountData,
  signedWire,
  unknownBlockhash,
  type CaseKeys,
  type ConformanceCase,
  type Step,
} from './cases.js';
import { DevnetRuntime, type Recorded } from './devnet-runtime.js';
import { LiteSvmRuntime } from './litesvm-runtime.js';
import { describeOutcome, type Outcome } from './outcome.js';

/**
 * The devnet against Agave's runtime (LiteSVM): the same signed bytes to both, the same outcome
 * (landed or not, the error in the devnet's JSON-RPC shapes, the fee, the compute units, the
 * balances after). Where the devnet must differ, docs/devnet.md says why ("What the devnet
 * models, checked against Agave's runtime").
 */

// Fast: 100 transactions take 1-7 s here (the latter at load 12 on 2 cores); shrinking stops 20 s before the timeout.
const PROFILE = { fast: { runs: 100, timeoutMs: 60_000 }, long: { runs: 10_000, timeoutMs: 900_000 } }[propertyProfile()];
// A slot more than the 150 blocks a blockhash stays valid.
const EXPIRY_SLOTS = 151;
// Blocks one case can produce (airdrops, two sends), with room to spare: the shared blockhash
// is replaced while it still has this many blocks to live.
const CASE_BLOCKS = 10;

let node: DevnetNode;
let devnet: DevnetRuntime;
let litesvm: LiteSvmRuntime;
/** The devnet blockhash cases sign with, also LiteSVM's latest: rewriting LiteSVM's costs a snapshot, so it is shared. */
let shared: { blockhash: string; lastValidBlockHeight: number } | undefined;

beforeAll(async () => {
  node = await startDevnetNode({ name: 'conformance', chainId: 1, slotIntervalMs: 0 });
  devnet = new DevnetRuntime(node);
  litesvm = new LiteSvmRuntime();
});

afterAll(async () => {
  await node.close();
});

async function sharedBlockhash(): Promise<string> {
  if (shared === undefined || node.bank.blockHeight + CASE_BLOCKS > shared.lastValidBlockHeight) {
    shared = await devnet.latestBlockhash();
    litesvm.useBlockhash(shared.blockhash);
  }
  return shared.blockhash;
}

/** Runs the case on both runtimes; one pair of outcomes per send. */
async function runBoth(c: ConformanceCase): Promise<Array<{ devnet: Outcome & { recorded: Recorded | null }; litesvm: Outcome }>> {
  const keys = freshKeys();
  const balances = initialBalances(c, keys);
  for (const [key, lamports] of balances) if (lamports > 0n) node.airdrop(key, lamports);
  litesvm.fund(balances);
  const nonceValue = c.nonce === 'none' ? undefined : createNonceAccount(keys);
  let blockhash = await sharedBlockhash();
  if (c.blockhash === 'expired') {
    node.advanceSlots(EXPIRY_SLOTS);
    await sharedBlockhash();
  }
  if (c.nonce === 'durable') blockhash = nonceValue!;
  if (c.blockhash === 'unknown') blockhash = unknownBlockhash();
  const wire = signedWire(c, keys, blockhash);
  const accounts = caseAccounts(keys);
  const sends = c.repeat ? 2 : 1;
  const outcomes = [];
  for (let i = 0; i < sends; i += 1) outcomes.push({ devnet: await devnet.run(wire, accounts), litesvm: litesvm.run(wire, accounts) });
  return outcomes;
}

/** The payer's nonce account, on both runtimes alike (written directly, as both start from one state); its value. */
function createNonceAccount(keys: CaseKeys): string {
  const { data, value } = nonceAccountData(keys);
  node.bank.journal().create(keys.nonce.toBase58(), { lamports: NONCE_RENT, owner: SYSTEM_PROGRAM_ID, data: data.slice(), executable: false });
  litesvm.setSystemAccount(keys.nonce.toBase58(), NONCE_RENT, data);
  return value;
}

/**
 * A durable-nonce transaction that failed, sent again: on a cluster (and the devnet) its nonce
 * advanced, so the bytes are refused with BlockhashNotFound; LiteSVM 1.5 leaves the nonce where it
 * was (docs/devnet.md) and refuses them as AlreadyProcessed. Neither lands them again.
 */
function isFailedNonceResend(c: ConformanceCase, send: number, first: Outcome | undefined, devnet: Outcome, litesvm: Outcome): boolean {
  const failedFirst = first?.landed === true && first.error !== null;
  const refusedAlike = !devnet.landed && !litesvm.landed && devnet.fee === 0n && litesvm.fee === 0n;
  return (
    c.nonce === 'durable' &&
    send === 1 &&
    failedFirst &&
    refusedAlike &&
    describeError(devnet) === '"BlockhashNotFound"' &&
    describeError(litesvm) === '"AlreadyProcessed"'
  );
}

/** What fails a transaction's load: LiteSVM 1.5 drops it for free; Agave since SIMD-0191, and the devnet, commit it fee-only. */
const LOAD_ERRORS = new Set(['MaxLoadedAccountsDataSizeExceeded', 'InvalidProgramForExecution', 'ProgramAccountNotFound']);

function isLoadFailure(outcome: Outcome | undefined): boolean {
  return outcome !== undefined && !outcome.landed && outcome.error !== null && 'err' in outcome.error && LOAD_ERRORS.has(outcome.error.err as string);
}

/**
 * What Agave (and so the devnet) does where LiteSVM's outcome is a load failure it dropped for
 * free (docs/devnet.md "What the devnet models, checked against Agave's runtime"): the first send is committed fee-only, the case's fee
 * (`caseFee`, PROTOCOL.md's formula) taken from the payer and nothing else moved; a resend is
 * refused without a fee, `AlreadyProcessed`, or `BlockhashNotFound` for a durable-nonce
 * transaction (SIMD-0191 advanced its nonce). Any other outcome is LiteSVM's own.
 */
function asAgave(c: ConformanceCase, send: number, first: Outcome | undefined, litesvm: Outcome): Outcome {
  if (!isLoadFailure(first)) return litesvm;
  const fee = caseFee(c);
  const [payer] = Object.keys(litesvm.balances);
  const left = (litesvm.balances[payer!] ?? 0n) - fee;
  const balances = { ...litesvm.balances, [payer!]: left === 0n ? null : left };
  if (send === 0) return { ...litesvm, landed: true, fee, balances };
  return { landed: false, error: { err: c.nonce === 'durable' ? 'BlockhashNotFound' : 'AlreadyProcessed' }, fee: 0n, unitsConsumed: 0, balances };
}

function describeError(outcome: Outcome): string {
  return JSON.stringify(outcome.error !== null && 'err' in outcome.error ? outcome.error.err : outcome.error);
}

async function expectSameOutcome(c: ConformanceCase): Promise<Outcome[]> {
  const outcomes = await runBoth(c);
  outcomes.forEach(({ devnet: { recorded, ...devnetOutcome }, litesvm: litesvmRan }, send) => {
    if (isFailedNonceResend(c, send, outcomes[0]?.litesvm, devnetOutcome, litesvmRan)) return;
    const litesvmOutcome = asAgave(c, send, outcomes[0]?.litesvm, litesvmRan);
    const differs = (what: string) =>
      new Error(
        `${describeCase(c)}\nsend ${send + 1} differs${what}:\n  devnet  ${describeOutcome(devnetOutcome)}\n  litesvm ${describeOutcome(litesvmOutcome)}`,
      );
    if (describeOutcome(devnetOutcome) !== describeOutcome(litesvmOutcome)) throw differs('');
    // What the devnet's getTransaction recorded must be what it charged and what it simulated.
    if (recorded !== null && (recorded.fee !== devnetOutcome.fee || recorded.unitsConsumed !== devnetOutcome.unitsConsumed)) {
      throw differs(` from the devnet's getTransaction meta (fee ${recorded.fee}, computeUnitsConsumed ${recorded.unitsConsumed})`);
    }
  });
  return outcomes.map((pair) => pair.litesvm);
}

const base: ConformanceCase = {
  steps: [],
  payerLamports: 10_000_000_000n,
  cosignerLamports: 0n,
  blockhash: 'latest',
  corruptSignature: undefined,
  repeat: false,
  nonce: 'none',
};
const transfer: Step = { kind: 'transfer', from: 'payer', to: 'funded', lamports: 1_000n };

describe('the devnet and Agave runtime (LiteSVM) agree', () => {
  it('a system transfer: 150 compute units, 5,000 lamports', async () => {
    const [outcome] = await expectSameOutcome({ ...base, steps: [transfer] });
    expect(outcome).toMatchObject({ landed: true, error: null, fee: 5_000n, unitsConsumed: 150 });
  });

  it('a limit of 20,000 at 1,000 micro-lamports: 5,020 lamports', async () => {
    const steps: Step[] = [{ kind: 'limit', units: 20_000 }, { kind: 'price', microLamports: 1_000n }, transfer];
    const [outcome] = await expectSameOutcome({ ...base, steps });
    expect(outcome).toMatchObject({ landed: true, error: null, fee: 5_020n, unitsConsumed: 450 });
  });

  it('a limit of 100: ComputationalBudgetExceeded, the fee still charged', async () => {
    const [outcome] = await expectSameOutcome({ ...base, steps: [{ kind: 'limit', units: 100 }, transfer] });
    expect(outcome).toMatchObject({ landed: true, error: { err: { InstructionError: [0, 'ComputationalBudgetExceeded'] } }, fee: 5_000n });
  });

  // The payer (64 + 0), the fresh recipient (absent: 0), the System (64 + 14) and ComputeBudget (64 + 22) programs.
  const transferLoads = 228;

  it('a loaded-accounts data-size limit of exactly what the transfer loads: it lands', async () => {
    const steps: Step[] = [
      { kind: 'loadedLimit', bytes: transferLoads },
      { ...transfer, to: 'fresh', lamports: 1_000_000_000n },
    ];
    const [outcome] = await expectSameOutcome({ ...base, steps });
    expect(outcome).toMatchObject({ landed: true, error: null, fee: 5_000n, unitsConsumed: 300 });
  });

  it('one byte less: MaxLoadedAccountsDataSizeExceeded; LiteSVM drops it for free, the devnet commits it fee-only as Agave since SIMD-0191', async () => {
    const steps: Step[] = [
      { kind: 'loadedLimit', bytes: transferLoads - 1 },
      { ...transfer, to: 'fresh', lamports: 1_000_000_000n },
    ];
    const [both] = await runBoth({ ...base, steps });
    expect(both!.litesvm).toMatchObject({ landed: false, error: { err: 'MaxLoadedAccountsDataSizeExceeded' }, fee: 0n, unitsConsumed: 0 });
    expect(both!.devnet).toMatchObject({
      landed: true,
      error: { err: 'MaxLoadedAccountsDataSizeExceeded' },
      fee: 5_000n,
      unitsConsumed: 0,
      recorded: { fee: 5_000n, unitsConsumed: 0 },
    });
  });

  it(
    'generated transactions: the same outcome on both',
    async () => {
      await checkProperty(
        'devnet vs LiteSVM',
        fc.asyncProperty(conformanceCase, async (c) => {
          await expectSameOutcome(c);
        }),
        PROFILE.runs,
        PROFILE.timeoutMs - 20_000,
      );
    },
    PROFILE.timeoutMs,
  );
});
