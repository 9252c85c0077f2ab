import type { AuthorityView, ChainAmounts } from '../chain/bridge-chains.js';
import type { ChainSide } from '../domain.js';
import type { ForeignSignerPolicy } from '../config/config.js';
import type { CrankStep } from './crank-types.js';
import type { ChainFees, ForeignTransaction } from './health-facts.js';
import { isStandby, type RoleFacts } from './authority-role.js';

/**
 * The rules about the authority's own accounts, as pure functions: can it pay this cycle's
 * fees on a chain, did someone else sign with its key, may the crank still submit.
 */

/** Where each step's transactions land, and so who pays their fees. */
const STEP_CHAINS: Readonly<Record<CrankStep, ChainSide>> = {
  ack_deposit: 'target',
  ack_withdraw: 'source',
  cleanup: 'source',
};

export const CHAINS: readonly ChainSide[] = ['source', 'target'];

/** The balance and the need on each chain, from one read. */
export function feeFacts(authority: AuthorityView, need: ChainAmounts): ChainFees {
  return {
    source: { balance: authority.source.balance, need: need.source },
    target: { balance: authority.target.balance, need: need.target },
  };
}

/** The chains on which the authority cannot pay what the plan would send. */
export function chainsShortOfFees(fees: ChainFees | null): ChainSide[] {
  return fees === null ? [] : CHAINS.filter((chain) => fees[chain].balance < fees[chain].need);
}

/** The chains on which the balance is below the early-warning level (a level of 0 warns never). */
export function chainsBelowMinimum(fees: ChainFees | null, minBalanceLamports: number): ChainSide[] {
  return fees === null ? [] : CHAINS.filter((chain) => fees[chain].balance < minBalanceLamports);
}

/**
 * Transactions the authority's key signed that this process did not: target chain first,
 * each chain newest first. The chain client reports each landed transaction once, and none
 * from before this process's first read (docs/chain-client.md, "Authority history").
 */
export function foreignTransactions(authority: AuthorityView, seenAtMs: number): ForeignTransaction[] {
  return (['target', 'source'] as const).flatMap((chain) =>
    authority[chain].transactions
      .filter((transaction) => !transaction.signedHere)
      .map(({ signature, slot }) => ({ chain, signature, slot, seenAtMs })),
  );
}

/** BRIDGE_ON_FOREIGN_SIGNER=halt: once another signer showed, nothing more is submitted until restart. */
export function isHalted(policy: ForeignSignerPolicy, foreignSigner: ForeignTransaction | null): boolean {
  return policy === 'halt' && foreignSigner !== null;
}

/** A step submits only while active, not halted, and while the authority can pay its chain's fees. */
export function maySubmit(
  step: CrankStep,
  facts: { fees: ChainFees | null; foreignSigner: ForeignTransaction | null; role: RoleFacts },
  policy: ForeignSignerPolicy,
): boolean {
  return !isStandby(facts.role) && !isHalted(policy, facts.foreignSigner) && !chainsShortOfFees(facts.fees).includes(STEP_CHAINS[step]);
}
