import { ComputeBudgetProgram, VersionedMessage, type PublicKey } from '@solana/web3.js';
import type { Logger } from '../../../log/logger.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';

/**
 * The price (SetComputeUnitPrice, micro-lamports per CU) the authority's newest landed
 * transaction paid, read from the chain at start so that a restart under a surge bids where
 * the last process left off (./priority-fee.ts, `restore`). Bounded: one getSignaturesForAddress
 * of LOOKBACK_SIGNATURES and at most MAX_TRANSACTION_READS getTransaction; transactions without
 * a price (the operator's `nonce init`) are passed over. Undefined when none is found or the
 * reads fail (no history on this chain): the bid then starts from the market price.
 */

const LOOKBACK_SIGNATURES = 20;
const MAX_TRANSACTION_READS = 4;

/** ComputeBudget instruction variant 3: SetComputeUnitPrice, a u64 LE of micro-lamports. */
const SET_COMPUTE_UNIT_PRICE = 3;

export async function readLastLandedPrice(rpc: ChainRpc, authority: PublicKey, logger: Logger, signal: AbortSignal): Promise<number | undefined> {
  try {
    const recent = await rpc.getSignaturesForAddress(authority, { limit: LOOKBACK_SIGNATURES }, signal);
    let reads = 0;
    for (const { signature, err } of recent) {
      if (err !== null) continue;
      if (reads++ >= MAX_TRANSACTION_READS) return undefined;
      const transaction = await rpc.getTransactionSignatures(signature, signal);
      if (transaction?.signers[0]?.key !== authority.toBase58()) continue;
      const price = computeUnitPriceOf(transaction.message);
      if (price !== undefined) return price;
    }
    return undefined;
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    logger.debug({ err }, 'the price of the last landed transaction could not be read; the bid starts from the market price');
    return undefined;
  }
}

/** The SetComputeUnitPrice of a serialized message; undefined without one (or when it does not parse). */
export function computeUnitPriceOf(message: Uint8Array): number | undefined {
  let parsed: VersionedMessage;
  try {
    parsed = VersionedMessage.deserialize(message);
  } catch {
    return undefined;
  }
  const budgetProgram = ComputeBudgetProgram.programId.toBase58();
  for (const instruction of parsed.compiledInstructions) {
    if (parsed.staticAccountKeys[instruction.programIdIndex]?.toBase58() !== budgetProgram) continue;
    const { data } = instruction;
    if (data.length !== 9 || data[0] !== SET_COMPUTE_UNIT_PRICE) continue;
    const price = Buffer.from(data).readBigUInt64LE(1);
    return price > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(price);
  }
  return undefined;
}
