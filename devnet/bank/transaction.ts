import { createPublicKey, verify } from 'node:crypto';
import { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { ComputeBudgetSanitizeError, readComputeBudget, type ComputeBudget } from './compute-budget.js';

/**
 * A wire transaction (legacy or v0 message) decoded and sanitized as a cluster does before it
 * runs anything. Failures are InvalidTransactionError, which the RPC layer reports as -32602.
 */

/** Solana's packet data size: the largest serialized transaction a cluster accepts. */
export const MAX_TRANSACTION_SIZE = 1232;

export class InvalidTransactionError extends Error {
  override readonly name = 'InvalidTransactionError';
}

export interface CompiledInstruction {
  programIdIndex: number;
  accountIndexes: number[];
  data: Uint8Array;
}

export interface DevnetTransaction {
  /** base58 of the first signature: the transaction's id. */
  signature: string;
  signatures: Uint8Array[];
  messageBytes: Uint8Array;
  accountKeys: string[];
  /** The first `signerCount` account keys must sign (numRequiredSignatures). */
  signerCount: number;
  writable: boolean[];
  recentBlockhash: string;
  instructions: CompiledInstruction[];
  /** Its compute-unit limit and price (ComputeBudget instructions or the defaults). */
  budget: ComputeBudget;
  /** The bytes as sent, for getTransaction. */
  wire: Uint8Array;
  version: 'legacy' | 0;
}

export function parseTransaction(bytes: Uint8Array): DevnetTransaction {
  if (bytes.length > MAX_TRANSACTION_SIZE) {
    throw new InvalidTransactionError(`transaction too large: ${bytes.length} bytes (max: ${MAX_TRANSACTION_SIZE})`);
  }
  const transaction = deserialize(bytes);
  const { message } = transaction;
  if (message.version === 0 && message.addressTableLookups.length > 0) {
    throw new InvalidTransactionError(
      'invalid transaction: address lookup tables are not supported by the devnet; list every account in the message',
    );
  }
  const accountKeys = message.staticAccountKeys.map((key) => key.toBase58());
  const instructions = message.compiledInstructions.map((ix) => ({
    programIdIndex: ix.programIdIndex,
    accountIndexes: [...ix.accountKeyIndexes],
    data: Uint8Array.from(ix.data),
  }));
  const parsed: Omit<DevnetTransaction, 'budget'> = {
    signature: bs58.encode(transaction.signatures[0] ?? new Uint8Array(64)),
    signatures: transaction.signatures,
    messageBytes: message.serialize(),
    accountKeys,
    signerCount: message.header.numRequiredSignatures,
    writable: accountKeys.map((_, index) => message.isAccountWritable(index)),
    recentBlockhash: message.recentBlockhash,
    instructions,
    wire: bytes,
    version: message.version === 0 ? 0 : 'legacy',
  };
  sanitize(parsed, message.header);
  return { ...parsed, budget: budgetOf(parsed) };
}

function budgetOf(tx: Omit<DevnetTransaction, 'budget'>): ComputeBudget {
  try {
    return readComputeBudget(tx.instructions.map((ix) => ({ programId: tx.accountKeys[ix.programIdIndex]!, data: ix.data })));
  } catch (err) {
    if (err instanceof ComputeBudgetSanitizeError) throw new InvalidTransactionError(`invalid transaction: ${err.message}`);
    throw err;
  }
}

function deserialize(bytes: Uint8Array): VersionedTransaction {
  try {
    return VersionedTransaction.deserialize(bytes);
  } catch (err) {
    throw new InvalidTransactionError(`failed to deserialize transaction: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function sanitize(
  tx: Omit<DevnetTransaction, 'budget'>,
  header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number },
): void {
  const keyCount = tx.accountKeys.length;
  const offsets = 'invalid transaction: Transaction failed to sanitize accounts offsets correctly';
  if (tx.signatures.length !== header.numRequiredSignatures || header.numRequiredSignatures === 0) {
    throw new InvalidTransactionError(`${offsets}: ${tx.signatures.length} signatures for ${header.numRequiredSignatures} required signers`);
  }
  // The fee payer (account 0) must be a writable signer.
  if (header.numReadonlySignedAccounts >= header.numRequiredSignatures) throw new InvalidTransactionError(`${offsets}: the fee payer is read-only`);
  if (header.numRequiredSignatures + header.numReadonlyUnsignedAccounts > keyCount) throw new InvalidTransactionError(offsets);
  if (new Set(tx.accountKeys).size !== keyCount) throw new InvalidTransactionError('invalid transaction: Transaction loads an account twice');
  for (const ix of tx.instructions) {
    const indexesOk = ix.accountIndexes.every((index) => index < keyCount);
    if (ix.programIdIndex === 0 || ix.programIdIndex >= keyCount || !indexesOk) throw new InvalidTransactionError(offsets);
  }
}

// RFC 8410: the SubjectPublicKeyInfo DER of a raw 32-byte ed25519 public key is this prefix + the key.
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Every required signature is a valid ed25519 signature of the message by its account key.
 * Node's native (OpenSSL) verification, RFC 8032 like the cluster's: about 50 µs a signature
 * where a JavaScript one took 2.4 ms and capped the devnet near 400 signatures a second.
 */
export function verifySignatures(tx: DevnetTransaction): boolean {
  return tx.signatures.every((signature, index) => {
    try {
      const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, bs58.decode(tx.accountKeys[index]!)]), format: 'der', type: 'spki' });
      return verify(null, tx.messageBytes, key, signature);
    } catch {
      return false;
    }
  });
}
