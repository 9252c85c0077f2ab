import { PACKET_DATA_SIZE, PublicKey, Transaction, type TransactionInstruction } from '@solana/web3.js';

/**
 * Packing consecutive instructions into legacy transactions of at most PACKET_DATA_SIZE (1232)
 * bytes, by serializing the candidate and measuring it: the size depends on how many distinct
 * accounts the instructions share (token pairs, depositors), so no per-instruction constant
 * is right.
 */

const SIGNATURE_SIZE = 64;
// Any 32-byte blockhash gives the same size; the real one is set when signing.
const SIZE_PROBE_BLOCKHASH = PublicKey.default.toBase58();

/** Wire size in bytes of a legacy transaction of `instructions` paid and signed by `feePayer`. */
export function transactionSize(instructions: readonly TransactionInstruction[], feePayer: PublicKey): number {
  const transaction = new Transaction({ feePayer, blockhash: SIZE_PROBE_BLOCKHASH, lastValidBlockHeight: 0 });
  transaction.add(...instructions);
  const message = transaction.compileMessage();
  let messageSize: number;
  try {
    messageSize = message.serialize().length;
  } catch (err) {
    // web3.js serializes into a PACKET_DATA_SIZE buffer and overruns it for far larger messages.
    if (err instanceof RangeError) return Number.POSITIVE_INFINITY;
    throw err;
  }
  const signatures = message.header.numRequiredSignatures;
  return shortVecLength(signatures) + signatures * SIGNATURE_SIZE + messageSize;
}

/** How many of the leading `instructions` fit one transaction; at least 1 or it throws. */
export function leadingBatchSize(
  instructions: readonly TransactionInstruction[],
  feePayer: PublicKey,
  maxBytes: number = PACKET_DATA_SIZE,
): number {
  let count = 0;
  while (count < instructions.length && transactionSize(instructions.slice(0, count + 1), feePayer) <= maxBytes) count++;
  if (count === 0 && instructions.length > 0) {
    const size = transactionSize(instructions.slice(0, 1), feePayer);
    throw new RangeError(`one instruction alone makes a ${size}-byte transaction, above the ${maxBytes}-byte limit`);
  }
  return count;
}

/** Splits `instructions`, in order, into consecutive batches that each fit one transaction. */
export function packBatches<T extends TransactionInstruction>(
  instructions: readonly T[],
  feePayer: PublicKey,
  maxBytes: number = PACKET_DATA_SIZE,
): T[][] {
  const batches: T[][] = [];
  for (let start = 0; start < instructions.length; ) {
    const count = leadingBatchSize(instructions.slice(start), feePayer, maxBytes);
    batches.push(instructions.slice(start, start + count));
    start += count;
  }
  return batches;
}

function shortVecLength(value: number): number {
  let length = 1;
  for (let rest = value >> 7; rest > 0; rest >>= 7) length++;
  return length;
}
