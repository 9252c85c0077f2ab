import type { Metrics } from '../../../../metrics/metrics.js';
import type { ChainRpc } from '../../../rpc/chain-rpc.js';
import { PathAcceptances, READ_ENDPOINTS_PATH, type SendPaths } from '../../../rpc/send-paths.js';
import type { LandingRecord } from './landing-record.js';
import type { SignedTransaction } from '../build/sign-transaction.js';

/**
 * What the TransactionSender does besides its read endpoints for each transaction it watches:
 * the same signed bytes to every send-only path (../../../rpc/send-paths.ts) each time they go to
 * the read endpoints, which paths accepted each version, and, once the outcome is known,
 * the landing measured in slots (./landing-record.ts). In blockhash mode a transaction has one
 * version, so every path carries the same bytes; in nonce mode every version excludes the
 * others (they advance one nonce value), so any of them may travel any path. Slots to land count
 * from the head (a processed slot) read beside the first send (docs/chain-client.md, "Landing
 * measured").
 */

/** One watched transaction's record of its sends. */
export interface Carried {
  /** The head (a processed slot, ChainRpc.getProcessedSlot) read beside its first send; undefined until that read answers. */
  sentAtSlot: number | undefined;
  /** The newest slot known before its first send (the confirmed floor, its nonce read's): where the count starts if the head read failed. */
  knownAtSend: number | undefined;
  acceptances: PathAcceptances;
}

/**
 * The slot a transaction's landing counts from: the head read beside its first send, else the
 * newest slot known before it (which reads high by the processed-confirmed gap and the floor's age).
 */
export function sendSlotOf(carried: Carried): number | undefined {
  return carried.sentAtSlot ?? carried.knownAtSend;
}

/** Whether a node or a send-only path accepted `signature`: a version nobody accepted says nothing of its price. */
export function acceptedAnywhere(carried: Carried, signature: string): boolean {
  return carried.acceptances.pathsOf(signature).length > 0;
}

export class Broadcast {
  constructor(
    private readonly rpc: ChainRpc,
    private readonly metrics: Metrics,
    readonly record: LandingRecord,
    private readonly paths: SendPaths | undefined,
  ) {}

  /**
   * A record for a transaction about to be sent for the first time. The head is read beside the
   * send, never before it: the bytes do not wait for a slot. A read that fails leaves the count
   * to start at the newest slot known.
   */
  carried(signed: SignedTransaction, signal: AbortSignal): Carried {
    const floor = this.rpc.slotFloor();
    const nonceSlot = signed.nonce?.slot;
    const knownAtSend = floor === undefined ? nonceSlot : Math.max(floor, nonceSlot ?? floor);
    const carried: Carried = { sentAtSlot: undefined, knownAtSend, acceptances: new PathAcceptances() };
    this.rpc.getProcessedSlot(signal).then(
      (slot) => {
        carried.sentAtSlot = slot;
      },
      () => undefined,
    );
    return carried;
  }

  /** The read endpoints' answer to a send of `signed` (accepted: some endpoint took it). */
  readEndpointsAnswered(carried: Carried, signed: SignedTransaction, accepted: boolean): void {
    this.metrics.sendPathSends.inc({ chain: this.rpc.chain, path: READ_ENDPOINTS_PATH, outcome: accepted ? 'accepted' : 'failed' });
    if (accepted) carried.acceptances.accepted(signed.signature, READ_ENDPOINTS_PATH);
  }

  /** The same bytes through every send-only path, beside the caller (a version, or a nonce-mode void of its versions). */
  sendOnPaths(carried: Carried, signed: Pick<SignedTransaction, 'wire' | 'signature'>, signal: AbortSignal): void {
    this.paths?.send(signed.wire, signal, (label) => carried.acceptances.accepted(signed.signature, label));
  }

  /** Version `landedIndex` of `versions` landed (with an error or not) in `slot`. */
  landed(carried: Carried, versions: readonly SignedTransaction[], landedIndex: number, slot: number): void {
    const version = versions[landedIndex]!;
    for (const path of carried.acceptances.pathsOf(version.signature)) this.metrics.sendPathLanded.inc({ chain: this.rpc.chain, path });
    const slots = Math.max(0, slot - (sendSlotOf(carried) ?? slot));
    this.record.landed(slots, landedIndex, versions.length);
  }

  /** None of `versions` landed, nor can any: whether some node or path accepted one says whether that is about its price. */
  notLanded(carried: Carried, versions: readonly SignedTransaction[]): void {
    this.record.notLanded(
      versions.length,
      versions.some((version) => acceptedAnywhere(carried, version.signature)),
    );
  }
}
