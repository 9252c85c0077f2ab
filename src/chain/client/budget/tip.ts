import { PublicKey, SystemProgram, type TransactionInstruction } from '@solana/web3.js';
import type { ChainSide } from '../../../domain.js';
import { MAX_NONCE_ACCOUNTS, type SendExtensions, type Tip } from '../../chain-settings.js';
import { leaseAddress } from '../../lease-account.js';
import { depositTrackerAddress, withdrawTrackerAddress } from '../../pda.js';
import { poolAddressSet } from '../read/signer-evidence.js';

/**
 * A tip for a send-only path that requires one (BRIDGE_*_TIP_LAMPORTS to one of
 * BRIDGE_*_TIP_ACCOUNT; docs/chain-client.md, "Send-only paths"): a System transfer from the
 * authority inside every transaction of the chain, so that it is paid only when the transaction
 * lands, and never without it. It leads the action's instructions (after AdvanceNonceAccount,
 * which must be first), so the simulation that sizes the batch runs it and an error's position
 * counts it.
 *
 * It is paid beside the priority fee, not out of it: the fee is bid from the market as it would
 * be without a tip (a provider such as Helius Sender requires both, and a tip taken out of the
 * fee cap left its minimum tip a price of 0), and the tip is added on top, within its own cap
 * (BRIDGE_*_TIP_MAX_LAMPORTS, checked at start: src/config/send-extensions.ts). Each transaction pays one
 * account of the list, chosen at random, as Jito recommends: one account written by every tipping
 * transaction is a write lock they all contend for.
 */

export type TipSettings = Tip;

/** The tip transfer of one transaction; `random` in [0, 1) picks its account. */
export function tipInstruction(authority: PublicKey, tip: TipSettings, random: () => number = Math.random): TransactionInstruction {
  const account = tip.accounts[Math.min(tip.accounts.length - 1, Math.floor(random() * tip.accounts.length))]!;
  return SystemProgram.transfer({ fromPubkey: authority, toPubkey: new PublicKey(account), lamports: tip.lamports });
}

/** What a tip account is checked against: the bridge's own accounts on both chains, from the configuration. */
export interface TipAccountSettings {
  sendExtensions: Record<ChainSide, SendExtensions>;
  sourceProgramId: string;
  targetProgramId: string;
  sourceChainId: number;
  targetChainId: number;
}

/**
 * Every sysvar (the Sysvar1111... owner and each sysvar the runtime defines): a transfer to one
 * fails or burns the tip, and a path's published tip account is never one.
 */
const SYSVARS: ReadonlyMap<string, string> = new Map([
  ['Sysvar1111111111111111111111111111111111111', 'the sysvar owner'],
  ['SysvarC1ock11111111111111111111111111111111', 'the Clock sysvar'],
  ['SysvarEpochSchedu1e111111111111111111111111', 'the EpochSchedule sysvar'],
  ['SysvarEpochRewards1111111111111111111111111', 'the EpochRewards sysvar'],
  ['SysvarFees111111111111111111111111111111111', 'the Fees sysvar'],
  ['Sysvar1nstructions1111111111111111111111111', 'the Instructions sysvar'],
  ['SysvarLastRestartS1ot1111111111111111111111', 'the LastRestartSlot sysvar'],
  ['SysvarRecentB1ockHashes11111111111111111111', 'the RecentBlockhashes sysvar'],
  ['SysvarRent111111111111111111111111111111111', 'the Rent sysvar'],
  ['SysvarRewards111111111111111111111111111111', 'the Rewards sysvar'],
  ['SysvarS1otHashes111111111111111111111111111', 'the SlotHashes sysvar'],
  ['SysvarS1otHistory11111111111111111111111111', 'the SlotHistory sysvar'],
  ['SysvarStakeHistory1111111111111111111111111', 'the StakeHistory sysvar'],
]);

/**
 * One line per tip account that is not a tip account: the bridge program, a sysvar, a tracker,
 * the authority itself or one of its own accounts (its durable-nonce accounts, the signing
 * lease). A tip there is paid to nobody who forwards anything, or back to the authority (a path
 * requiring a tip then refuses every transaction), or writes an account the bridge locks.
 */
export function tipAccountProblems(settings: TipAccountSettings, authority: PublicKey): string[] {
  const { sourceChainId, targetChainId } = settings;
  const sourceProgramId = new PublicKey(settings.sourceProgramId);
  const targetProgramId = new PublicKey(settings.targetProgramId);
  const own = new Map<string, string>(SYSVARS);
  own.set(settings.targetProgramId, 'the bridge program (BRIDGE_TARGET_PROGRAM_ID)');
  own.set(
    settings.sourceProgramId,
    settings.sourceProgramId === settings.targetProgramId
      ? 'the bridge program (BRIDGE_SOURCE_PROGRAM_ID and BRIDGE_TARGET_PROGRAM_ID)'
      : 'the bridge program (BRIDGE_SOURCE_PROGRAM_ID)',
  );
  own.set(depositTrackerAddress(sourceProgramId, targetChainId).toBase58(), 'the DepositTracker');
  own.set(withdrawTrackerAddress(targetProgramId, sourceChainId).toBase58(), 'the WithdrawTracker');
  for (const chainId of [sourceChainId, targetChainId]) {
    for (const nonce of poolAddressSet(authority, chainId, MAX_NONCE_ACCOUNTS)) own.set(nonce, "one of the authority's durable-nonce accounts");
  }
  own.set(leaseAddress(authority, sourceChainId).toBase58(), "the authority's signing lease");
  own.set(authority.toBase58(), 'the authority itself (the key this server signs with)');
  const problems: string[] = [];
  for (const [chain, name] of [
    ['source', 'BRIDGE_SOURCE_TIP_ACCOUNT'],
    ['target', 'BRIDGE_TARGET_TIP_ACCOUNT'],
  ] as const) {
    for (const account of settings.sendExtensions[chain].tip?.accounts ?? []) {
      const what = own.get(account);
      if (what !== undefined) problems.push(`${name}: ${account} is ${what}, not a tip account; list the tip accounts the send-only path publishes`);
    }
  }
  return problems;
}
