import type { Keypair } from '@solana/web3.js';
import type { AckDepositVote, AckWithdrawVote, BridgeChains } from '../../src/chain/port/bridge-chains.js';
import { depositResultToWire } from '../../src/chain/port/result-wire.js';
import type { DepositEntry, DepositResult, WithdrawEntry } from '../../src/chain/types.js';
import type { World } from '../../devnet/index.js';
import { describeError } from '../../src/errors.js';
import type { Metrics } from '../../src/metrics/metrics.js';
import { sameResult, sameTransfer, type Transfer } from '../invariants/state-checks.js';
import { authorityChains } from './clients.js';
import type { ChainSide, Ledger } from './ledger.js';
import { nextIndexOf, type BridgeState } from './snapshot.js';

/**
 * A dishonest authority. It signs with its own key through the real chain client, so the
 * program treats its votes like anyone's, and it follows the program's rules (it can only vote
 * at its own next_index), but not the honest rules: per vote it either behaves honestly or lies
 * (proposes a transfer or a result that differs from the chains' truth, approves a wrong
 * proposal, rejects a right one, or relays before rule 3.1 allows). Lies come in `flavor`s.
 */

export interface ByzantineAction {
  chain: ChainSide;
  /** One entry per vote, from the authority's next_index on: true lies, false votes honestly. */
  lies: boolean[];
  flavor: number;
}

export class ByzantineAuthority {
  readonly authority: string;
  private readonly chains: BridgeChains;

  constructor(
    readonly slot: number,
    world: World,
    keypair: Keypair,
    private readonly ledger: Ledger,
    /** Mints it may swap into a lie (another token pair of the bridge). */
    private readonly mints: readonly string[],
    metrics: Metrics,
  ) {
    this.authority = keypair.publicKey.toBase58();
    this.chains = authorityChains(world, slot, keypair, metrics);
  }

  async act(action: ByzantineAction): Promise<string> {
    const state = this.ledger.state();
    const signal = AbortSignal.timeout(10_000);
    try {
      if (action.chain === 'target') {
        const votes = this.ackDepositVotes(state, action);
        if (votes.length === 0) return 'nothing to vote on';
        await this.chains.ackDeposits(votes, signal);
        return `ack_deposit ${describeVotes(votes)} landed`;
      }
      const votes = this.ackWithdrawVotes(state, action);
      if (votes.length === 0) return 'nothing to vote on';
      await this.chains.ackWithdraws(votes, signal);
      return `ack_withdraw ${describeVotes(votes)} landed`;
    } catch (err) {
      return `failed: ${describeError(err)}`;
    }
  }

  private ackDepositVotes(state: BridgeState, { lies, flavor }: ByzantineAction): AckDepositVote[] {
    const votes: AckDepositVote[] = [];
    let index = nextIndexOf(state.target.header, this.authority) ?? 0;
    let entryCount = Number(state.target.header.entryCount);
    for (const lie of lies) {
      const deposit = state.source.entries[index];
      if (index === entryCount) {
        const transfer = lie ? this.wrongTransfer(deposit, flavor) : deposit;
        if (transfer === undefined) break;
        votes.push(depositVote(index, true, transfer));
        entryCount += 1;
      } else {
        const proposal = state.target.entries[index];
        if (proposal === undefined || proposal.status === 'Empty') break;
        const right = deposit !== undefined && sameTransfer(proposal, deposit);
        // The program checks a yes vote against the proposal, so a lying yes carries the proposal's data.
        votes.push(depositVote(index, lie ? !right : right, proposal));
      }
      index += 1;
    }
    return votes;
  }

  private ackWithdrawVotes(state: BridgeState, { lies, flavor }: ByzantineAction): AckWithdrawVote[] {
    const votes: AckWithdrawVote[] = [];
    let index = nextIndexOf(state.source.header, this.authority) ?? 0;
    for (const lie of lies) {
      const deposit = state.source.entries[index];
      if (deposit === undefined) break;
      const truth = finalResult(state.target.entries[index]);
      if (deposit.status === 'Initialized') {
        const proposal = lie ? wrongResult(deposit, truth, flavor) : truth;
        if (proposal === undefined) break;
        votes.push({ index, approve: true, result: depositResultToWire(proposal) });
      } else {
        if (deposit.proposed.kind === 'None' || (!lie && truth === undefined)) break;
        const right = truth !== undefined && sameResult(deposit.proposed, truth);
        const approve = lie ? !right : right;
        votes.push({ index, approve, result: depositResultToWire(approve ? deposit.proposed : (truth ?? deposit.proposed)) });
      }
      index += 1;
    }
    return votes;
  }

  /** A transfer that differs from the deposit (or invents one where there is none). */
  private wrongTransfer(deposit: DepositEntry | undefined, flavor: number): Transfer {
    if (deposit === undefined) return { amount: 1_000n + BigInt(flavor), recipient: this.authority, sourceMint: this.mints[0]! };
    switch (flavor % 3) {
      case 0:
        return { ...deposit, amount: deposit.amount + 1n + BigInt(flavor) };
      case 1:
        return { ...deposit, recipient: this.authority };
      default:
        return { ...deposit, sourceMint: this.mints.find((mint) => mint !== deposit.sourceMint)! };
    }
  }
}

/** A result that differs from the destination's, or one made up before the destination finalized. */
function wrongResult(deposit: DepositEntry, truth: DepositResult | undefined, flavor: number): DepositResult {
  const full: DepositResult = { kind: 'Confirmed', amount: deposit.amount };
  if (truth === undefined) return flavor % 2 === 0 ? full : { kind: 'Rejected', reason: 'InternalError' };
  if (truth.kind === 'Rejected')
    return flavor % 2 === 0 ? full : { kind: 'Rejected', reason: truth.reason === 'LimitExceeded' ? 'InternalError' : 'LimitExceeded' };
  if (truth.kind === 'Confirmed' && truth.amount > 1n && flavor % 2 === 0) return { kind: 'Confirmed', amount: truth.amount - 1n };
  return { kind: 'Rejected', reason: 'InsufficientFunds' };
}

function finalResult(entry: WithdrawEntry | undefined): DepositResult | undefined {
  return entry?.status === 'Finalized' ? entry.result : undefined;
}

function depositVote(index: number, approve: boolean, transfer: Transfer): AckDepositVote {
  return { index, approve, amount: transfer.amount.toString(), recipient: transfer.recipient, sourceMint: transfer.sourceMint };
}

function describeVotes(votes: ReadonlyArray<{ index: number; approve: boolean }>): string {
  return votes.map((vote) => `${vote.index}${vote.approve ? '+' : '-'}`).join(',');
}
