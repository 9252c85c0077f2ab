import { PublicKey } from '@solana/web3.js';
import { encodeTrackerHeader } from '../../src/chain/codec/accounts.js';
import type { InstructionOf } from '../../src/chain/codec/instructions.js';
import { MAX_ACCOUNT_DATA_BYTES, MAX_AUTHORITIES, maxTrackerCapacity, trackerAccountSize } from '../../src/chain/codec/layout.js';
import type { TrackerHeader, TrackerKind } from '../../src/chain/types.js';
import { signerAt, writableAt, type InstructionContext } from './context.js';
import { ProgramError } from './errors.js';
import { SYSTEM_PROGRAM_ID, rentFundedLamports } from './store.js';
import { trackerAddress } from './tracker.js';

/**
 * initialize_deposit_tracker / initialize_withdraw_tracker. Checks run in Anchor's order: accounts
 * (signer, writable, PDA), then the account being new (0), then the parameters (2500).
 */

interface TrackerParams {
  capacity: bigint;
  threshold: number;
  authorities: string[];
}

export function initializeDepositTracker(ctx: InstructionContext, ix: InstructionOf<'initialize_deposit_tracker'>): void {
  initializeTracker(ctx, 'DepositTracker', { sourceChainId: ctx.chainId, targetChainId: ix.targetChainId }, ix);
}

export function initializeWithdrawTracker(ctx: InstructionContext, ix: InstructionOf<'initialize_withdraw_tracker'>): void {
  initializeTracker(ctx, 'WithdrawTracker', { sourceChainId: ix.sourceChainId, targetChainId: ctx.chainId }, ix);
}

function initializeTracker(
  ctx: InstructionContext,
  kind: TrackerKind,
  chains: { sourceChainId: number; targetChainId: number },
  params: TrackerParams,
): void {
  const governance = signerAt(ctx, 0, 'governance');
  const { address } = writableAt(ctx, 1, kind);
  const expected = trackerAddress(ctx, kind, chains);
  if (address !== expected) throw new ProgramError('InvalidAccount', `${kind} ${address} is not the tracker PDA ${expected}`);
  const existing = ctx.store.get(address);
  if (existing !== undefined && (existing.owner !== SYSTEM_PROGRAM_ID || existing.data.length > 0)) {
    throw new ProgramError('AccountAlreadyInitialized', `${kind} ${address} is already in use`);
  }
  checkParams(kind, params);
  const header: TrackerHeader = {
    kind,
    ...chains,
    threshold: params.threshold,
    authorityCount: params.authorities.length,
    entryCount: 0n,
    capacity: params.capacity,
    settledPrefix: 0n,
    generation: 0n,
    governance: governance.address,
    authorities: params.authorities,
    votes: params.authorities.map(() => ({ nextIndex: 0n, lastVote: 'None' as const })),
  };
  const data = new Uint8Array(trackerAccountSize(kind, Number(params.capacity)));
  data.set(encodeTrackerHeader(header));
  // PROTOCOL.md: initialization charges no rent; the account still holds the exempt minimum, as on a cluster.
  const lamports = rentFundedLamports(existing?.lamports, data.length);
  ctx.store.create(address, { lamports, owner: ctx.programId.toBase58(), data, executable: false });
  ctx.log(`Program log: ${kind} ${address} initialized: capacity ${params.capacity}, threshold ${params.threshold} of ${params.authorities.length}`);
}

function checkParams(kind: TrackerKind, { capacity, threshold, authorities }: TrackerParams): void {
  const count = authorities.length;
  if (count < 1 || count > MAX_AUTHORITIES) requireViolated(`authorities has ${count} keys, expected 1 ..= ${MAX_AUTHORITIES}`);
  if (threshold < 1 || threshold > count) requireViolated(`threshold ${threshold} is outside 1 ..= ${count} (the authority count)`);
  if (new Set(authorities).size !== count) requireViolated('authorities lists the same key twice');
  if (authorities.includes(PublicKey.default.toBase58())) requireViolated('authorities contains the all-zero key');
  const maxCapacity = maxTrackerCapacity(kind);
  if (capacity < 1n || capacity > BigInt(maxCapacity)) {
    requireViolated(`capacity ${capacity} is outside 1 ..= ${maxCapacity} (an account holds at most ${MAX_ACCOUNT_DATA_BYTES} bytes)`);
  }
}

function requireViolated(detail: string): never {
  throw new ProgramError('RequireViolated', `invalid initialize parameters: ${detail}`);
}
