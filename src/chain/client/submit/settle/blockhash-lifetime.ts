import type { TransactionInstruction } from '@solana/web3.js';
import type { CrankAction } from '../../../../domain.js';
import type { ChainRpc } from '../../../rpc/chain-rpc.js';
import type { LifetimeLead } from '../build/sign-transaction.js';
import { submitFailure, type SendOutcome } from './send-outcome.js';
import type { LifetimeValue, Pending, SendingCore, TransactionLifetime } from './lifetime.js';

/**
 * The blockhash lifetime: a transaction signed against the latest blockhash can land until the
 * block height passes its lastValidBlockHeight (about 60 to 90 s). It has one version: a price
 * too low shows as an expiry, and the chain's next attempt signs anew one escalation step higher
 * (../../budget/priority-fee.ts). Whether it expired is the watch's decision (../watch/signature-watch.ts).
 */
export class BlockhashLifetime implements TransactionLifetime {
  readonly notLandedIsOutbid = true;

  constructor(
    private readonly rpc: ChainRpc,
    private readonly core: SendingCore,
  ) {}

  lead(_action: CrankAction, tipped: TransactionInstruction[]): LifetimeLead {
    return { leading: tipped };
  }

  signingValue(_lead: LifetimeLead, signal: AbortSignal): Promise<LifetimeValue> {
    return this.rpc.getLatestBlockhash('confirmed', signal);
  }

  sending(): void {}

  async poll(pending: Pending, checkExpiry: boolean, signal: AbortSignal): Promise<SendOutcome | 'waiting'> {
    const { watch } = this.core;
    const { signed, job } = pending;
    const recent = await watch.poll(signed.signature, false, signal);
    const seen = recent.kind === 'found' ? recent : await watch.afterAbsence(pending, recent, checkExpiry, signal);
    if (seen.kind === 'found') return this.core.outcomeOf(seen.status, signed, pending);
    if (seen.kind !== 'expired') return 'waiting';
    return { kind: 'failed', failure: submitFailure(job, { outcome: 'not_landed', reason: seen.reason, sendsAccepted: seen.sendsAccepted }) };
  }

  async rebroadcast(): Promise<void> {}

  /** Nothing to void: the transaction expires with its blockhash. */
  async void(): Promise<boolean> {
    return false;
  }

  async voidLanded(): Promise<boolean> {
    return false;
  }

  settled(): void {}
}
