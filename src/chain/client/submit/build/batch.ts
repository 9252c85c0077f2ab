import { PACKET_DATA_SIZE, type PublicKey, type TransactionInstruction } from '@solana/web3.js';

/**
 * Packing consecutive instructions into legacy transactions of at most PACKET_DATA_SIZE (1232)
 * bytes. The size depends on how many distinct accounts the instructions share (token pairs,
 * depositors), so no per-instruction constant is right; it is counted from the legacy wire
 * format one instruction at a time instead of by compiling and serializing every candidate
 * (which cost O(n²) base58 encodings and blocked the event loop for tens of milliseconds per
 * cycle). Tests check the count against web3.js's signed serialization.
 *
 * Legacy wire format: shortvec(signatures) + 64 per signature + message; message = 3 header
 * bytes + shortvec(keys) + 32 per key + 32 blockhash + shortvec(instructions) + per instruction
 * (1 program index + shortvec(accounts) + 1 per account + shortvec(data) + data).
 */

const SIGNATURE_SIZE = 64;
const KEY_SIZE = 32;
const HEADER_SIZE = 3;
const BLOCKHASH_SIZE = 32;

// A key's identity without base58: the same PublicKey objects recur across a batch's instructions.
const keyIds = new WeakMap<PublicKey, string>();

function keyId(key: PublicKey): string {
  let id = keyIds.get(key);
  if (id === undefined) {
    id = Buffer.from(key.toBytes()).toString('latin1');
    keyIds.set(key, id);
  }
  return id;
}

/** A transaction's wire size, grown one instruction at a time. */
class SizeTally {
  readonly #keys = new Set<string>();
  readonly #signers = new Set<string>();
  #instructions = 0;
  #instructionBytes = 0;

  constructor(feePayer: PublicKey) {
    const payer = keyId(feePayer);
    this.#keys.add(payer);
    this.#signers.add(payer);
  }

  add(instruction: TransactionInstruction): void {
    this.#keys.add(keyId(instruction.programId));
    for (const meta of instruction.keys) {
      const id = keyId(meta.pubkey);
      this.#keys.add(id);
      if (meta.isSigner) this.#signers.add(id);
    }
    this.#instructions += 1;
    this.#instructionBytes +=
      1 + shortVecLength(instruction.keys.length) + instruction.keys.length + shortVecLength(instruction.data.length) + instruction.data.length;
  }

  get bytes(): number {
    const signers = this.#signers.size;
    const keys = this.#keys.size;
    const message =
      HEADER_SIZE + shortVecLength(keys) + keys * KEY_SIZE + BLOCKHASH_SIZE + shortVecLength(this.#instructions) + this.#instructionBytes;
    return shortVecLength(signers) + signers * SIGNATURE_SIZE + message;
  }
}

/** Wire size in bytes of a legacy transaction of `instructions` paid and signed by `feePayer`. */
export function transactionSize(instructions: readonly TransactionInstruction[], feePayer: PublicKey): number {
  const tally = new SizeTally(feePayer);
  for (const instruction of instructions) tally.add(instruction);
  return tally.bytes;
}

/**
 * How many of the leading `instructions` fit one transaction behind `prefix` (instructions that
 * lead every transaction, e.g. the compute budget's); at least 1 or it throws.
 */
export function leadingBatchSize(
  instructions: readonly TransactionInstruction[],
  feePayer: PublicKey,
  maxBytes: number = PACKET_DATA_SIZE,
  prefix: readonly TransactionInstruction[] = [],
): number {
  const tally = new SizeTally(feePayer);
  for (const instruction of prefix) tally.add(instruction);
  let count = 0;
  for (const instruction of instructions) {
    tally.add(instruction);
    if (tally.bytes > maxBytes) break;
    count += 1;
  }
  if (count === 0 && instructions.length > 0) {
    throw new RangeError(`one instruction alone makes a ${tally.bytes}-byte transaction, above the ${maxBytes}-byte limit`);
  }
  return count;
}

/** Splits `instructions`, in order, into consecutive batches that each fit one transaction behind `prefix`. */
export function packBatches<T extends TransactionInstruction>(
  instructions: readonly T[],
  feePayer: PublicKey,
  maxBytes: number = PACKET_DATA_SIZE,
  prefix: readonly TransactionInstruction[] = [],
): T[][] {
  const batches: T[][] = [];
  for (let start = 0; start < instructions.length; ) {
    const count = leadingBatchSize(instructions.slice(start), feePayer, maxBytes, prefix);
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
