import { PublicKey } from '@solana/web3.js';
import { ACCOUNT_DISCRIMINATORS, DISCRIMINATOR_SIZE, TOKEN_PAIR_SIZE } from '../../src/chain/codec/layout.js';
import { encodeTokenPair } from '../../src/chain/codec/accounts.js';
import { bytesEqual } from '../../src/chain/codec/bytes.js';
import type { InstructionOf } from '../../src/chain/codec/instructions.js';
import { tokenPairAddress } from '../../src/chain/pda.js';
import type { TrackerHeader } from '../../src/chain/types.js';
import { resetFrom } from './ack-withdraw.js';
import { signerAt, writableAt, type InstructionContext } from './context.js';
import { ProgramError } from './errors.js';
import { SYSTEM_PROGRAM_ID, rentFundedLamports } from './store.js';
import { loadTracker, saveHeader, zeroEntries } from './tracker.js';
import { rewindPositions } from './votes.js';

/** Governance: set_token_pair (destination) and reset_pending (source) reset pending work. */

export function setTokenPair(ctx: InstructionContext, ix: InstructionOf<'set_token_pair'>): void {
  const governance = signerAt(ctx, 0, 'governance');
  const tracker = loadTracker(ctx, 1, 'WithdrawTracker');
  const { header } = tracker;
  const pairAddress = checkTokenPairAccount(ctx, header.sourceChainId, ix.sourceMint);
  checkGovernance(header, governance.address);
  writeTokenPair(ctx, pairAddress, header.sourceChainId, ix);
  // Finalized entries are exactly 0 .. settled_prefix: everything above is pending work.
  zeroEntries(ctx, tracker, header.settledPrefix, header.entryCount);
  header.entryCount = header.settledPrefix;
  rewindPositions(header, header.settledPrefix);
  header.generation += 1n;
  saveHeader(ctx, tracker);
  ctx.log(`Program log: token pair ${ix.sourceMint} set; pending withdraw entries removed, generation ${header.generation}`);
}

export function resetPending(ctx: InstructionContext): void {
  const governance = signerAt(ctx, 0, 'governance');
  const tracker = loadTracker(ctx, 1, 'DepositTracker');
  const { header } = tracker;
  checkGovernance(header, governance.address);
  // Entries below settled_prefix are cleaned up, hence Finalized: none can be Relaying.
  const lowest = resetFrom(ctx, tracker, header.settledPrefix);
  if (lowest !== undefined) rewindPositions(header, lowest);
  header.generation += 1n;
  saveHeader(ctx, tracker);
  ctx.log(`Program log: pending deposits reset${lowest === undefined ? '' : ` from ${lowest}`}, generation ${header.generation}`);
}

function checkGovernance(header: TrackerHeader, signer: string): void {
  if (signer !== header.governance) throw new ProgramError('Unauthorized', `signer ${signer} is not the tracker's governance ${header.governance}`);
}

function checkTokenPairAccount(ctx: InstructionContext, sourceChainId: number, sourceMint: string): string {
  const { address } = writableAt(ctx, 2, 'token pair');
  const expected = tokenPairAddress(ctx.programId, sourceChainId, new PublicKey(sourceMint)).toBase58();
  if (address !== expected)
    throw new ProgramError('InvalidAccount', `token pair ${address} is not the TokenPair PDA ${expected} of source_mint ${sourceMint}`);
  const existing = ctx.store.get(address);
  if (existing === undefined || (existing.owner === SYSTEM_PROGRAM_ID && existing.data.length === 0)) return address;
  const isTokenPair =
    existing.owner === ctx.programId.toBase58() &&
    existing.data.length === TOKEN_PAIR_SIZE &&
    bytesEqual(existing.data.subarray(0, DISCRIMINATOR_SIZE), ACCOUNT_DISCRIMINATORS.TokenPair);
  if (!isTokenPair) throw new ProgramError('InvalidAccount', `token pair ${address} holds an account that is not a TokenPair`);
  return address;
}

function writeTokenPair(ctx: InstructionContext, address: string, sourceChainId: number, ix: InstructionOf<'set_token_pair'>): void {
  const data = encodeTokenPair({ sourceChainId, ...pairFields(ix) });
  const existing = ctx.store.get(address);
  if (existing?.owner === ctx.programId.toBase58()) {
    ctx.store.writeData(address, 0, data);
    return;
  }
  const lamports = rentFundedLamports(existing?.lamports, data.length);
  ctx.store.create(address, { lamports, owner: ctx.programId.toBase58(), data, executable: false });
}

function pairFields(ix: InstructionOf<'set_token_pair'>) {
  const { sourceMint, targetMint, frozen, limitRemaining, vaultBalance } = ix;
  return { sourceMint, targetMint, frozen, limitRemaining, vaultBalance };
}
