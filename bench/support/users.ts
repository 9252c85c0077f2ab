import { Keypair, LAMPORTS_PER_SOL, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { depositInstruction, withdrawInstruction } from '../../devnet/instructions.js';
import { devnetConnection, submitTransaction } from '../../devnet/world/submit.js';
import { sleep } from '../../src/time.js';
import type { BenchWorld } from './bench-world.js';
import { readTrackers } from './ledger.js';

/**
 * The bridge's users: depositors on the source chain who claim (withdraw) their Confirmed
 * transfers on the target. They use the devnet's JSON-RPC like any client, so injected faults
 * hit them too; each step is retried until the ledger shows its effect, and only after the
 * ledger shows none (on the devnet a transaction lands when it is sent or never, so a retry
 * never doubles a deposit).
 */

const USER_LAMPORTS = 1_000n * BigInt(LAMPORTS_PER_SOL);
const MAX_STEP_ATTEMPTS = 40;
const RETRY_WAIT_MS = 50;
// On the devnet a transaction lands when it is sent or never: a short wait, then the ledger decides.
const STATUS_TIMEOUT_MS = 500;

export interface Deposit {
  amount: bigint;
  sourceMint: string;
}

export function fundUsers(bench: BenchWorld, count: number): Keypair[] {
  return Array.from({ length: count }, () => {
    const user = Keypair.generate();
    bench.pair.source.airdrop(user.publicKey, USER_LAMPORTS);
    bench.pair.target.airdrop(user.publicKey, USER_LAMPORTS);
    return user;
  });
}

/** Deposits and resolves once the source tracker holds the deposit; returns its entry index. */
export async function deposit(bench: BenchWorld, user: Keypair, transfer: Deposit, signal: AbortSignal): Promise<number> {
  const recipient = Keypair.generate().publicKey.toBase58();
  const instruction = depositInstruction({
    programId: bench.programId,
    depositor: user.publicKey,
    depositTracker: new PublicKey(bench.world.source.depositTracker),
    amount: transfer.amount,
    recipient,
    sourceMint: transfer.sourceMint,
  });
  const landedIndex = () => readTrackers(bench).deposits.entries.findIndex((entry) => entry.recipient === recipient);
  await untilLanded(bench, 'source', instruction, user, () => landedIndex() >= 0, `deposit to ${recipient}`, signal);
  return landedIndex();
}

/** The user claims target entry `index` (withdraw); resolves once it is no longer Pending. */
export async function claim(bench: BenchWorld, user: Keypair, index: number, signal: AbortSignal): Promise<void> {
  const instruction = withdrawInstruction({
    programId: bench.programId,
    signer: user.publicKey,
    withdrawTracker: new PublicKey(bench.world.target.withdrawTracker),
    tokenAccount: Keypair.generate().publicKey,
    index: BigInt(index),
  });
  const claimed = () => readTrackers(bench).withdrawals.entries[index]?.createdTokenAccount === 'Created';
  await untilLanded(bench, 'target', instruction, user, claimed, `withdraw ${index}`, signal);
}

async function untilLanded(
  bench: BenchWorld,
  chain: 'source' | 'target',
  instruction: TransactionInstruction,
  signer: Keypair,
  landed: () => boolean,
  step: string,
  signal: AbortSignal,
): Promise<void> {
  const connection = devnetConnection(bench.pair[chain].url, signal);
  let lastError: unknown;
  for (let attempt = 1; attempt <= MAX_STEP_ATTEMPTS; attempt++) {
    try {
      await submitTransaction(connection, [instruction], [signer], { chain, step, signal, timeoutMs: STATUS_TIMEOUT_MS });
      return;
    } catch (err) {
      signal.throwIfAborted();
      if (landed()) return;
      lastError = err;
      await sleep(RETRY_WAIT_MS, signal);
    }
  }
  throw new Error(`bench user: ${step} did not land after ${MAX_STEP_ATTEMPTS} attempts`, { cause: lastError });
}
