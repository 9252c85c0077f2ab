import type { SignatureStatus, TransactionInstruction } from '@solana/web3.js';
import type { CrankAction } from '../../../../domain.js';
import type { SignedVoid } from './nonce-void.js';
import type { LifetimeLead } from '../build/sign-transaction.js';
import type { Carried } from '../send/broadcast.js';
import type { SendOutcome, TransactionJob } from './send-outcome.js';
import type { NonceBinding, SignedTransaction } from '../build/sign-transaction.js';
import type { SignatureWatch, Watched } from '../watch/signature-watch.js';

/**
 * A transaction's lifetime: what decides until when it can land. Two, side by side as
 * @solana/kit keeps them: a blockhash lifetime (./blockhash-lifetime.ts: it can land until the
 * block height passes its lastValidBlockHeight) and a durable-nonce lifetime
 * (./nonce-lifetime.ts: it can land until its nonce moves). The sender
 * (../transaction-sender.ts) picks one per transaction when it signs and sends it, and its one
 * sending loop asks that lifetime, never which kind it is.
 */

/** Signs a higher-priced version of `current` against the same lifetime value; undefined when there is none to sign. */
export type Reprice = (current: SignedTransaction, signal: AbortSignal) => Promise<SignedTransaction | undefined>;

/** What a new transaction is signed against. */
export interface LifetimeValue {
  blockhash: string;
  lastValidBlockHeight: number;
  /** Nonce mode: the lane and its value. */
  nonce?: NonceBinding;
}

/**
 * A transaction whose outcome is not known yet. In nonce mode `signed` is the newest version and
 * `versions` every version signed against the same nonce value (the newest last), any of which
 * may be the one that lands.
 */
export type Pending = Watched & {
  job: TransactionJob;
  lifetime: TransactionLifetime;
  versions: SignedTransaction[];
  carried: Carried;
  reprice?: Reprice;
  /**
   * The head (a status poll's processed context slot) when the newest version was signed, for a
   * re-priced one; the first version's count starts at its send slot (../send/broadcast.ts).
   */
  pricedAtSlot?: number;
  /** The newest processed slot a status poll of its versions answered at: the re-sign pace counts to it. */
  headSlot?: number;
  /** At the latest poll a version was in a block (processed, not yet confirmed): no re-price while it settles. */
  inBlock?: boolean;
  /** Nonce mode: the void signed against the versions' value to make them unlandable (./nonce-void.ts). */
  void?: SignedVoid;
};

/** What a lifetime uses of the sender: the status polls, what a status says, and a rebroadcast to every path. */
export interface SendingCore {
  readonly watch: SignatureWatch;
  outcomeOf(status: SignatureStatus, signed: SignedTransaction, pending: Pending): SendOutcome | 'waiting';
  rebroadcast(pending: Pending, signed: SignedTransaction, signal: AbortSignal): Promise<void>;
}

export interface TransactionLifetime {
  /** Whether a transaction that never landed says its price was too low (the bidder steps up). */
  readonly notLandedIsOutbid: boolean;
  /** How `action`'s next batch lands: the instructions that lead it (`tipped`: the tip's, if any) and, with a nonce, its lane. */
  lead(action: CrankAction, tipped: TransactionInstruction[]): LifetimeLead;
  /** The value to sign `lead`'s next transaction against: `binding` again for a re-sign. */
  signingValue(lead: LifetimeLead, signal: AbortSignal, binding?: NonceBinding): Promise<LifetimeValue>;
  /** Before the first send's bytes leave (`pending` is already in flight). */
  sending(pending: Pending): void;
  /** One poll of the transaction's outcome; `checkExpiry` once per rebroadcast interval. */
  poll(pending: Pending, checkExpiry: boolean, signal: AbortSignal): Promise<SendOutcome | 'waiting'>;
  /** What goes out with every rebroadcast of the transaction besides its own bytes. */
  rebroadcast(pending: Pending, signal: AbortSignal): Promise<void>;
  /** Makes the transaction unlandable, when the crank no longer wants it; whether it did. */
  void(pending: Pending, signal: AbortSignal): Promise<boolean>;
  /** Whether what made the transaction unlandable is this server's own void. */
  voidLanded(pending: Pending, signal: AbortSignal): Promise<boolean>;
  /** The outcome is known (`landed`: it is on chain); the sender no longer holds it. */
  settled(pending: Pending, landed: boolean, voidLanded: boolean): void;
}
