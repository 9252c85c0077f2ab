import { randomBytes } from 'node:crypto';
import {
  ComputeBudgetProgram,
  Keypair,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
  type PublicKey,
} from '@solana/web3.js';
import bs58 from 'bs58';
import fc from 'fast-check';
import { rentExemptMinimum } from '../../../devnet/program/store.js';
import { setLoadedAccountsDataSizeLimitInstruction } from '../../../src/chain/codec/compute-budget.js';
import { CURRENT_NONCE_VERSION, encodeNonceState, NONCE_ACCOUNT_SIZE } from '../../../src/chain/codec/nonce-state.js';

/**
 * One generated case: a transaction of system transfers and ComputeBudget instructions, in any
 * order, from one or two signers, with what can go wrong before and while it runs. Keys are
 * made fresh for every run of a case, so a replayed case is the same case.
 */

export type Step =
  | { kind: 'transfer'; from: 'payer' | 'cosigner'; to: 'funded' | 'fresh' | 'cosigner'; lamports: bigint }
  | { kind: 'limit'; units: number }
  | { kind: 'price'; microLamports: bigint }
  | { kind: 'loadedLimit'; bytes: number }
  | { kind: 'unknownProgram' }
  | { kind: 'advanceNonce' };

type BlockhashCase = 'latest' | 'expired' | 'unknown';

export interface ConformanceCase {
  steps: Step[];
  /** The fee payer's lamports before the case (0: the account does not exist). */
  payerLamports: bigint;
  cosignerLamports: bigint;
  blockhash: BlockhashCase;
  /** Flip a byte of this signature (an index below the signer count), or none. */
  corruptSignature: number | undefined;
  /** Send the same bytes a second time. */
  repeat: boolean;
  /**
   * `durable`: the payer's nonce account exists, AdvanceNonceAccount comes first and the bytes are
   * signed against the nonce (unless the blockhash is `unknown`); `advance`: the nonce account
   * exists and an AdvanceNonceAccount sits anywhere in a transaction signed with a blockhash.
   */
  nonce: 'none' | 'durable' | 'advance';
}

/** Rent-exempt minimum of an account without data (128 bytes of overhead × 6,960 lamports = 890,880). */
const RENT_EXEMPT_MINIMUM = rentExemptMinimum(0);
const FUNDED_RECIPIENT_LAMPORTS = 2_000_000n;
const SOL = 1_000_000_000n;

// Small, around the rent-exempt minimum, above most balances, or a funded cosigner's whole balance.
const lamportAmount = fc.oneof(
  fc.bigInt(1n, 10_000n),
  fc.bigInt(RENT_EXEMPT_MINIMUM - 10_000n, RENT_EXEMPT_MINIMUM + 10_000n),
  fc.bigInt(SOL / 10n, 3n * SOL),
  fc.constant(SOL),
);

const transferStep: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('transfer' as const),
  from: fc.constantFrom('payer' as const, 'cosigner' as const),
  to: fc.constantFrom('funded' as const, 'fresh' as const, 'cosigner' as const),
  lamports: lamportAmount,
});

// Too low for what follows (each builtin instruction costs 150), enough, or above 1,400,000 (clamped).
const limitStep: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('limit' as const),
  units: fc.oneof(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 1_000, max: 1_400_000 }), fc.integer({ min: 1_400_001, max: 0xffff_ffff })),
});

// Mostly prices a payer can afford; sometimes one whose priority fee no balance covers.
const priceStep: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('price' as const),
  microLamports: fc.oneof(
    { arbitrary: fc.bigInt(0n, 10_000n), weight: 3 },
    { arbitrary: fc.bigInt(0n, 10_000_000n), weight: 2 },
    { arbitrary: fc.bigInt(0n, 2n ** 64n - 1n), weight: 1 },
  ),
});

/**
 * A loaded-accounts data-size limit: 0 (refused), below or around what a case without a nonce
 * loads (64 bytes an account plus its data: 228 to 420 bytes), or above anything a case loads
 * and above 64 MiB (clamped). Never between 450 and 7,000 bytes: a nonce case also loads the
 * RecentBlockhashes sysvar, 6,008 bytes on a cluster and the devnet, 48 in LiteSVM (whose
 * sysvar keeps one blockhash), so it loads at least 484 bytes in LiteSVM and at most 6,636 on
 * the devnet, and both runtimes agree only outside that range.
 */
const loadedLimitStep: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('loadedLimit' as const),
  bytes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 450 }), fc.integer({ min: 7_000, max: 0xffff_ffff })),
});

/** `arbitrary` one time in `oneIn`, else nothing. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: oneIn - 1 }, { arbitrary, weight: 1 });

/**
 * One to four transfers, at most one of each ComputeBudget instruction (and now and then a
 * duplicate), now and then an instruction of an unknown program, in any order.
 */
const steps: fc.Arbitrary<Step[]> = fc
  .record({
    transfers: fc.array(transferStep, { minLength: 1, maxLength: 4 }),
    limit: sometimes(limitStep, 2),
    price: sometimes(priceStep, 2),
    loadedLimit: sometimes(loadedLimitStep, 3),
    duplicate: sometimes(fc.oneof(limitStep, priceStep, loadedLimitStep), 10),
    unknownProgram: sometimes(fc.constant<Step>({ kind: 'unknownProgram' }), 12),
  })
  .chain(({ transfers, limit, price, loadedLimit, duplicate, unknownProgram }) => {
    const all = [...transfers, limit, price, loadedLimit, duplicate, unknownProgram].filter((s): s is Step => s !== undefined);
    return fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length });
  });

/** Enough transfers to pass 1,232 bytes (17 bytes each; web3.js compiles at most 1,232 bytes of instructions). */
const oversized: fc.Arbitrary<Step[]> = fc
  .integer({ min: 60, max: 70 })
  .map((count) => Array.from({ length: count }, () => ({ kind: 'transfer' as const, from: 'payer' as const, to: 'funded' as const, lamports: 1n })));

export const conformanceCase: fc.Arbitrary<ConformanceCase> = fc
  .record({
    steps: fc.oneof({ arbitrary: steps, weight: 29 }, { arbitrary: oversized, weight: 1 }),
    payerLamports: fc.oneof(
      { arbitrary: fc.constant(10n * SOL), weight: 6 },
      { arbitrary: fc.constant(0n), weight: 1 },
      { arbitrary: fc.bigInt(1n, 20_000n), weight: 2 },
      // Exactly the base fee of one or two signatures: the fee empties the account.
      { arbitrary: fc.constantFrom(5_000n, 10_000n), weight: 1 },
      { arbitrary: fc.bigInt(RENT_EXEMPT_MINIMUM, RENT_EXEMPT_MINIMUM + 20_000n), weight: 1 },
    ),
    cosignerLamports: fc.oneof(fc.constant(SOL), fc.constant(0n), fc.bigInt(1n, RENT_EXEMPT_MINIMUM + 10_000n)),
    blockhash: fc.oneof({ arbitrary: fc.constant('latest' as const), weight: 14 }, fc.constant('expired' as const), fc.constant('unknown' as const)),
    corruptSignature: fc.oneof({ arbitrary: fc.constant(undefined), weight: 14 }, fc.constant(0), fc.constant(1)),
    repeat: fc.boolean(),
    nonce: fc.oneof({ arbitrary: fc.constant('none' as const), weight: 4 }, fc.constant('durable' as const), fc.constant('advance' as const)),
    nonceAt: fc.nat(),
  })
  .map(({ nonceAt, ...c }) => ({
    ...c,
    steps: withNonceAdvance(c.steps, c.nonce, nonceAt),
    corruptSignature: c.corruptSignature !== undefined && c.corruptSignature < signerCount(c.steps) ? c.corruptSignature : undefined,
  }));

function withNonceAdvance(steps: Step[], nonce: ConformanceCase['nonce'], at: number): Step[] {
  if (nonce === 'none') return steps;
  const position = nonce === 'durable' ? 0 : at % (steps.length + 1);
  return [...steps.slice(0, position), { kind: 'advanceNonce' }, ...steps.slice(position)];
}

function signerCount(steps: readonly Step[]): number {
  return steps.some((s) => s.kind === 'transfer' && s.from === 'cosigner') ? 2 : 1;
}

const MAX_UNIT_LIMIT = 1_400_000;

/**
 * The fee of the case's transaction as PROTOCOL.md "Compute units and fees" states it: 5,000 a
 * signature and the price times the limit (SetComputeUnitLimit clamped to 1,400,000; without
 * it 200,000 per instruction of a program that is not a builtin, here the unknown one, and 3,000
 * per builtin one), rounded up. For a case without a duplicate budget instruction.
 */
export function caseFee(c: ConformanceCase): bigint {
  const limitStep = c.steps.find((s) => s.kind === 'limit');
  const unknown = c.steps.filter((s) => s.kind === 'unknownProgram').length;
  const defaultLimit = Math.min(MAX_UNIT_LIMIT, 200_000 * unknown + 3_000 * (c.steps.length - unknown));
  const limit = BigInt(limitStep === undefined ? defaultLimit : Math.min(MAX_UNIT_LIMIT, limitStep.units));
  const price = c.steps.find((s) => s.kind === 'price')?.microLamports ?? 0n;
  return 5_000n * BigInt(signerCount(c.steps)) + (price * limit + 999_999n) / 1_000_000n;
}

/** The keys one run of a case uses. */
export interface CaseKeys {
  payer: Keypair;
  cosigner: Keypair;
  funded: PublicKey;
  fresh: PublicKey;
  unknownProgram: PublicKey;
  /** The payer's nonce account (it exists only in nonce cases). */
  nonce: PublicKey;
}

export function freshKeys(): CaseKeys {
  return {
    payer: Keypair.generate(),
    cosigner: Keypair.generate(),
    funded: Keypair.generate().publicKey,
    fresh: Keypair.generate().publicKey,
    unknownProgram: Keypair.generate().publicKey,
    nonce: Keypair.generate().publicKey,
  };
}

/** Every account whose balance the case compares, in a fixed order. */
export function caseAccounts(keys: CaseKeys): string[] {
  return [keys.payer.publicKey, keys.cosigner.publicKey, keys.funded, keys.fresh, keys.nonce].map((key) => key.toBase58());
}

export function initialBalances(c: ConformanceCase, keys: CaseKeys): Map<string, bigint> {
  return new Map([
    [keys.payer.publicKey.toBase58(), c.payerLamports],
    [keys.cosigner.publicKey.toBase58(), c.cosignerLamports],
    [keys.funded.toBase58(), FUNDED_RECIPIENT_LAMPORTS],
  ]);
}

/** Rent-exempt minimum of an 80-byte nonce account. */
export const NONCE_RENT = rentExemptMinimum(NONCE_ACCOUNT_SIZE);

/** An initialized nonce account's data (PROTOCOL.md "Durable nonces"): the payer its authority, a random value. */
export function nonceAccountData(keys: CaseKeys): { data: Uint8Array; value: string } {
  const value = bs58.encode(randomBytes(32));
  const data = encodeNonceState({
    version: CURRENT_NONCE_VERSION,
    state: 'initialized',
    authority: keys.payer.publicKey.toBase58(),
    durableNonce: value,
    lamportsPerSignature: 5_000n,
  });
  return { data, value };
}

export function unknownBlockhash(): string {
  return bs58.encode(randomBytes(32));
}

/**
 * The signed wire bytes. The message lists accounts in the order they first appear (web3.js's
 * TransactionMessage), not sorted by key as its Transaction does, so a replayed case, with keys
 * of its own, has the same account indexes. Serialized by hand (shortvec signature count,
 * signatures, message): web3.js refuses to serialize over 1,232 bytes, which is one of the cases.
 */
export function signedWire(c: ConformanceCase, keys: CaseKeys, blockhash: string): Uint8Array {
  const message = new TransactionMessage({
    payerKey: keys.payer.publicKey,
    recentBlockhash: blockhash,
    instructions: c.steps.map((s) => instruction(s, keys)),
  }).compileToLegacyMessage();
  const tx = new VersionedTransaction(message);
  tx.sign(signerCount(c.steps) === 2 ? [keys.payer, keys.cosigner] : [keys.payer]);
  const signatures = tx.signatures.map((signature) => Uint8Array.from(signature));
  if (c.corruptSignature !== undefined) signatures[c.corruptSignature]![0]! ^= 0xff;
  return Uint8Array.from(Buffer.concat([Buffer.from([signatures.length]), ...signatures, message.serialize()]));
}

function instruction(s: Step, keys: CaseKeys): TransactionInstruction {
  switch (s.kind) {
    case 'transfer':
      return SystemProgram.transfer({
        fromPubkey: (s.from === 'payer' ? keys.payer : keys.cosigner).publicKey,
        toPubkey: s.to === 'cosigner' ? keys.cosigner.publicKey : keys[s.to],
        lamports: s.lamports,
      });
    case 'limit':
      return ComputeBudgetProgram.setComputeUnitLimit({ units: s.units });
    case 'price':
      return ComputeBudgetProgram.setComputeUnitPrice({ microLamports: s.microLamports });
    case 'loadedLimit':
      return setLoadedAccountsDataSizeLimitInstruction(s.bytes);
    case 'unknownProgram':
      return new TransactionInstruction({ programId: keys.unknownProgram, keys: [], data: Buffer.from([0]) });
    case 'advanceNonce':
      return SystemProgram.nonceAdvance({ noncePubkey: keys.nonce, authorizedPubkey: keys.payer.publicKey });
  }
}

export function describeCase(c: ConformanceCase): string {
  const steps = c.steps.map((s) => {
    if (s.kind === 'transfer') return `transfer(${s.from}->${s.to}, ${s.lamports})`;
    if (s.kind === 'limit') return `SetComputeUnitLimit(${s.units})`;
    if (s.kind === 'price') return `SetComputeUnitPrice(${s.microLamports})`;
    if (s.kind === 'loadedLimit') return `SetLoadedAccountsDataSizeLimit(${s.bytes})`;
    if (s.kind === 'advanceNonce') return 'AdvanceNonceAccount';
    return 'unknownProgram';
  });
  const faults = [
    `payer ${c.payerLamports}`,
    `cosigner ${c.cosignerLamports}`,
    `blockhash ${c.blockhash}`,
    ...(c.corruptSignature === undefined ? [] : [`signature ${c.corruptSignature} corrupted`]),
    ...(c.repeat ? ['sent twice'] : []),
    ...(c.nonce === 'durable' ? ['signed against the nonce'] : []),
  ];
  return `[${steps.join(', ')}] ${faults.join(', ')}`;
}
