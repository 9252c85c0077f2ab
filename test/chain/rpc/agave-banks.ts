import type { Handler, Reply, RpcCall } from './json-rpc-test-server.js';

/**
 * A node's banks as Agave's rpc.rs answers from them (`get_bank_with_config`), for fake RPC
 * transports: processed is the head, confirmed trails it by `confirmedLag` slots, finalized by
 * `finalizedLag`; each read answers at the slot of its commitment's bank (finalized where a
 * request names none), `minContextSlot` is judged against that bank (-32016 with
 * `data.contextSlot`), and getSignatureStatuses answers from the processed bank, each status
 * with its own slot and the confirmationStatus of the highest bank that holds it. A transaction
 * on a minority fork shows `processed` until the fork is abandoned, then nothing.
 */
export interface AgaveBanks {
  /** The head (processed bank's slot); a test moves it. */
  head: number;
  confirmedLag: number;
  finalizedLag: number;
  /** Transactions by signature and the slot each is in (processed from then on). */
  readonly landed: Map<string, number>;
  /** Transactions on a minority fork: `processed` while it lives, never in a confirmed or finalized bank; `abandon` drops them. */
  readonly forked: Map<string, number>;
  abandon(signature: string): void;
  bankSlot(commitment: string | undefined): number;
  handler(balance?: number): Handler;
}

export function agaveBanks(head: number, { confirmedLag = 2, finalizedLag = 32 } = {}): AgaveBanks {
  const banks: AgaveBanks = {
    head,
    confirmedLag,
    finalizedLag,
    landed: new Map(),
    forked: new Map(),
    abandon: (signature) => {
      banks.forked.delete(signature);
    },
    bankSlot(commitment) {
      if (commitment === 'processed') return banks.head;
      if (commitment === 'confirmed') return banks.head - banks.confirmedLag;
      return banks.head - banks.finalizedLag;
    },
    handler:
      (balance = 1) =>
      (call) =>
        answer(banks, call, balance),
  };
  return banks;
}

function answer(banks: AgaveBanks, call: RpcCall, balance: number): Reply {
  const config = (call.params.at(-1) ?? {}) as { commitment?: string; minContextSlot?: number };
  if (call.method === 'getSignatureStatuses') {
    const signatures = call.params[0] as string[];
    return { result: { context: { slot: banks.head }, value: signatures.map((signature) => statusOf(banks, signature)) } };
  }
  const slot = banks.bankSlot(config.commitment);
  if (config.minContextSlot !== undefined && config.minContextSlot > slot) {
    return { error: { code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: slot } } };
  }
  if (call.method === 'getSlot') return { result: slot };
  if (call.method === 'getEpochInfo')
    return { result: { absoluteSlot: slot, blockHeight: slot - 10, epoch: 0, slotIndex: slot, slotsInEpoch: 432_000 } };
  if (call.method === 'getLatestBlockhash')
    return { result: { context: { slot }, value: { blockhash: '11111111111111111111111111111111', lastValidBlockHeight: slot + 140 } } };
  return { result: { context: { slot }, value: balance } };
}

function statusOf(banks: AgaveBanks, signature: string) {
  const forkSlot = banks.forked.get(signature);
  if (forkSlot !== undefined && forkSlot <= banks.head)
    return { slot: forkSlot, confirmations: 0, err: null, status: { Ok: null }, confirmationStatus: 'processed' };
  const slot = banks.landed.get(signature);
  if (slot === undefined || slot > banks.head) return null;
  const confirmationStatus = slot <= banks.bankSlot('finalized') ? 'finalized' : slot <= banks.bankSlot('confirmed') ? 'confirmed' : 'processed';
  return { slot, confirmations: confirmationStatus === 'finalized' ? null : 1, err: null, status: { Ok: null }, confirmationStatus };
}
