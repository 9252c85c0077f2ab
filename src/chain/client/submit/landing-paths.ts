import type { Metrics } from '../../../metrics/metrics.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import { PathAcceptances, READ_ENDPOINTS_PATH, type SendPaths } from '../../rpc/send-paths.js';
import type { LandingRecord } from './landing-record.js';
import type { SignedTransaction } from './signature-watch.js';

/**
 * What the TransactionSender does besides its read endpoints for each transaction it watches:
 * the same signed bytes to every send-only path (../../rpc/send-paths.ts) each time they go to
 * the read endpoints, which paths accepted each version, and, once the outcome is known,
 * the landing measured in slots (./landing-record.ts). In blockhash mode a transaction has one
 * version, so every path carries the same bytes; in nonce mode every version excludes the
 * others (they advance one nonce value), so any of them may travel any path.
 */

/** One watched transaction's record of its sends. */
export interface Carried {
  /** The newest slot seen when its first version was first sent. */
  firstSentSlot: number | undefined;
  acceptances: PathAcceptances;
}

export class LandingPaths {
  constructor(
    private readonly rpc: ChainRpc,
    private readonly metrics: Metrics,
    readonly landing: LandingRecord,
    private readonly paths: SendPaths | undefined,
  ) {}

  /** A record for a transaction about to be sent for the first time. */
  carried(signed: SignedTransaction): Carried {
    const seen = this.rpc.slotFloor();
    const nonceSlot = signed.nonce?.slot;
    const firstSentSlot = seen === undefined ? nonceSlot : Math.max(seen, nonceSlot ?? seen);
    return { firstSentSlot, acceptances: new PathAcceptances() };
  }

  /** The read endpoints' answer to a send of `signed` (accepted: some endpoint took it). */
  readEndpointsAnswered(carried: Carried, signed: SignedTransaction, accepted: boolean): void {
    this.metrics.sendPathSends.inc({ chain: this.rpc.chain, path: READ_ENDPOINTS_PATH, outcome: accepted ? 'accepted' : 'failed' });
    if (accepted) carried.acceptances.accepted(signed.signature, READ_ENDPOINTS_PATH);
  }

  /** The same bytes through every send-only path, beside the caller. */
  sendOnPaths(carried: Carried, signed: SignedTransaction, signal: AbortSignal): void {
    this.paths?.send(signed.wire, signal, (label) => carried.acceptances.accepted(signed.signature, label));
  }

  /** Version `landedIndex` of `versions` landed (with an error or not) in `slot`. */
  landed(carried: Carried, versions: readonly SignedTransaction[], landedIndex: number, slot: number): void {
    const version = versions[landedIndex]!;
    for (const path of carried.acceptances.pathsOf(version.signature)) this.metrics.sendPathLanded.inc({ chain: this.rpc.chain, path });
    const slots = Math.max(0, slot - (carried.firstSentSlot ?? slot));
    this.landing.landed(slots, landedIndex, versions.length);
  }

  notLanded(versions: readonly SignedTransaction[]): void {
    this.landing.notLanded(versions.length);
  }
}
