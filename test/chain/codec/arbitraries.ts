import bs58 from 'bs58';
import fc from 'fast-check';
import type { BridgeInstruction, DepositResultArg } from '../../../src/chain/codec/instructions.js';
import { maxTrackerCapacity } from '../../../src/chain/codec/layout.js';
import type {
  AuthorityVote,
  DepositEntry,
  DepositResult,
  RejectionReason,
  TokenPair,
  TrackerHeader,
  WithdrawEntry,
} from '../../../src/chain/types.js';

/** fast-check arbitraries for every decoded record and instruction (test-only). */

const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const u16 = fc.integer({ min: 0, max: 0xffff });
const u8 = fc.integer({ min: 0, max: 0xff });
const key = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => bs58.encode(bytes));

const reason = fc.constantFrom<RejectionReason>('InternalError', 'InsufficientFunds', 'LimitExceeded', 'TokenPairFrozen', 'TokenPairNotFound');

export const depositResult: fc.Arbitrary<DepositResult> = fc.oneof(
  fc.constant<DepositResult>({ kind: 'None' }),
  u64.map((amount): DepositResult => ({ kind: 'Confirmed', amount })),
  reason.map((r): DepositResult => ({ kind: 'Rejected', reason: r })),
);

export const depositEntry: fc.Arbitrary<DepositEntry> = fc.record({
  amount: u64,
  depositor: key,
  recipient: key,
  sourceMint: key,
  status: fc.constantFrom('Initialized', 'Relaying', 'Finalized'),
  cleanupCompleted: fc.boolean(),
  yesVotes: u16,
  noVotes: u16,
  proposed: depositResult,
  result: depositResult,
  refundedAmount: u64,
  depositSlot: u64,
});

export const withdrawEntry: fc.Arbitrary<WithdrawEntry> = fc.record({
  status: fc.constantFrom('Empty', 'Voting', 'Finalized'),
  createdTokenAccount: fc.constantFrom('Pending', 'Created', 'NotRequired'),
  yesVotes: u16,
  noVotes: u16,
  amount: u64,
  recipient: key,
  sourceMint: key,
  result: depositResult,
  tokenAccount: key,
  finalizedSlot: u64,
});

export const tokenPair: fc.Arbitrary<TokenPair> = fc.record({
  sourceChainId: u16,
  sourceMint: key,
  targetMint: key,
  frozen: fc.boolean(),
  limitRemaining: u64,
  vaultBalance: u64,
});

const vote: fc.Arbitrary<AuthorityVote> = fc.record({ nextIndex: u64, lastVote: fc.constantFrom('None', 'Yes', 'No') });

/**
 * A header the program could hold: 1..16 authorities, 1 <= threshold <= count,
 * settled <= entries <= capacity <= what a 10 MiB account holds.
 */
export const trackerHeader: fc.Arbitrary<TrackerHeader> = fc
  .record({
    kind: fc.constantFrom('DepositTracker' as const, 'WithdrawTracker' as const),
    authorityCount: fc.integer({ min: 1, max: 16 }),
    capacityPart: fc.double({ min: 0, max: 1, noNaN: true }),
    entryPart: fc.double({ min: 0, max: 1, noNaN: true }),
    settledPart: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .chain(({ kind, authorityCount, capacityPart, entryPart, settledPart }) => {
    const capacity = scale(BigInt(maxTrackerCapacity(kind)), capacityPart);
    const entryCount = scale(capacity, entryPart);
    return fc.record({
      kind: fc.constant(kind),
      sourceChainId: u16,
      targetChainId: u16,
      threshold: fc.integer({ min: 1, max: authorityCount }),
      authorityCount: fc.constant(authorityCount),
      entryCount: fc.constant(entryCount),
      capacity: fc.constant(capacity),
      settledPrefix: fc.constant(scale(entryCount, settledPart)),
      generation: u64,
      governance: key,
      authorities: fc.array(key, { minLength: authorityCount, maxLength: authorityCount }),
      votes: fc.array(vote, { minLength: authorityCount, maxLength: authorityCount }),
    });
  });

function scale(max: bigint, part: number): bigint {
  return (max * BigInt(Math.floor(part * 1_000_000))) / 1_000_000n;
}

const depositResultArg: fc.Arbitrary<DepositResultArg> = fc.record({ tag: u8, reason: u8, amount: u64 });

const authorities = fc.array(key, { maxLength: 20 });

export const instruction: fc.Arbitrary<BridgeInstruction> = fc.oneof(
  fc.record({ name: fc.constant('ack_deposit' as const), index: u64, approve: fc.boolean(), amount: u64, recipient: key, sourceMint: key }),
  fc.record({ name: fc.constant('ack_withdraw' as const), index: u64, approve: fc.boolean(), result: depositResultArg }),
  fc.record({ name: fc.constant('cleanup_deposit' as const), index: u64 }),
  fc.record({ name: fc.constant('initialize_deposit_tracker' as const), targetChainId: u16, capacity: u64, threshold: u8, authorities }),
  fc.record({ name: fc.constant('initialize_withdraw_tracker' as const), sourceChainId: u16, capacity: u64, threshold: u8, authorities }),
  fc.record({ name: fc.constant('deposit' as const), amount: u64, recipient: key, sourceMint: key }),
  fc.record({ name: fc.constant('withdraw' as const), index: u64 }),
  fc.record({
    name: fc.constant('set_token_pair' as const),
    sourceMint: key,
    targetMint: key,
    frozen: fc.boolean(),
    limitRemaining: u64,
    vaultBalance: u64,
  }),
  fc.record({ name: fc.constant('reset_pending' as const) }),
);
