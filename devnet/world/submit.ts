import { Connection, SendTransactionError, Transaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import { describeError } from '../../src/errors.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { DevnetError } from '../devnet-error.js';

/**
 * Sends one transaction through the node's JSON-RPC (preflight on) with an unmodified web3.js
 * Connection, and waits for its status by polling getSignatureStatuses until it is confirmed
 * (processed is not landed: a fork may still take it, and the next step's preflight runs on the
 * confirmed bank). Used by the world bootstrap, the traffic generator and tests: the devnet is
 * exercised the way clients use it.
 */

const POLL_INTERVAL_MS = 100;
const DEFAULT_TIMEOUT_MS = 30_000;
const REBROADCAST_INTERVAL_MS = 1_000;

/** A Connection whose every request honours `signal`; 429s are not retried behind the caller's back. */
export function devnetConnection(url: string, signal: AbortSignal): Connection {
  return new Connection(url, {
    commitment: 'confirmed',
    disableRetryOnRateLimit: true,
    // A signal of its own per request: fetch (undici) keeps an abort listener on the signal it is
    // given until the request is garbage collected, so one long-lived signal passed to thousands
    // of requests piles up listeners (Node's MaxListenersExceededWarning past 1,500).
    fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.any([signal]) }),
  });
}

export interface SubmitOptions {
  chain: string;
  step: string;
  signal: AbortSignal;
  timeoutMs?: number;
  /** Lands a transaction the program refuses (with an error, its fee paid) instead of stopping it in preflight. */
  skipPreflight?: boolean;
  /** How far to wait: confirmed (the default) or finalized. */
  commitment?: 'confirmed' | 'finalized';
}

export async function submitTransaction(
  connection: Connection,
  instructions: TransactionInstruction[],
  signers: [Keypair, ...Keypair[]],
  options: SubmitOptions,
): Promise<string> {
  const { blockhash, lastValidBlockHeight } = await rpcStep(options, () => connection.getLatestBlockhash());
  const tx = new Transaction({ feePayer: signers[0].publicKey, blockhash, lastValidBlockHeight }).add(...instructions);
  tx.sign(...signers);
  const wire = tx.serialize();
  const signature = await rpcStep(options, () => connection.sendRawTransaction(wire, { skipPreflight: options.skipPreflight === true }));
  // A wallet rebroadcasts what it has not seen land: an endpoint that forwards a share of what it
  // accepts (forwardShare) drops some sends, and a minority fork can lose one seen at processed.
  await awaitStatus(connection, signature, options, () => connection.sendRawTransaction(wire, { skipPreflight: true }));
  return signature;
}

/**
 * Waits until `signature` (a transaction or an airdrop) is confirmed, or finalized with
 * `options.commitment`, without an error; while no bank knows it, `rebroadcast` is called once
 * per REBROADCAST_INTERVAL_MS (at most timeout / interval times: 30).
 */
export async function awaitStatus(
  connection: Connection,
  signature: string,
  options: SubmitOptions,
  rebroadcast?: () => Promise<unknown>,
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const enough = options.commitment === 'finalized' ? ['finalized'] : ['confirmed', 'finalized'];
  let sentAt = Date.now();
  for (;;) {
    const { value } = await rpcStep(options, () => connection.getSignatureStatuses([signature]));
    const status = value[0];
    if ((status === null || status === undefined) && rebroadcast !== undefined && Date.now() - sentAt >= REBROADCAST_INTERVAL_MS) {
      sentAt = Date.now();
      // A refused rebroadcast (its blockhash expired, say) changes nothing: the status, or the timeout, decides.
      await rebroadcast().catch(() => undefined);
    }
    if (status !== null && status !== undefined && enough.includes(status.confirmationStatus ?? 'finalized')) {
      if (status.err === null) return;
      throw failedToSubmit(options, `landed with error ${JSON.stringify(status.err)}`, signature, JSON.stringify(status.err));
    }
    if (Date.now() >= deadline) throw failedToSubmit(options, `is not ${enough[0]} before the timeout`, signature);
    await sleep(POLL_INTERVAL_MS, undefined, { signal: options.signal });
  }
}

async function rpcStep<T>(options: SubmitOptions, call: () => Promise<T>): Promise<T> {
  options.signal.throwIfAborted();
  try {
    return await call();
  } catch (err) {
    if (options.signal.aborted) throw options.signal.reason;
    throw failedToSubmit(options, `failed: ${oneLine(err)}`);
  }
}

/**
 * A failed call in one line: web3.js's SendTransactionError message spans about eleven (the
 * message, ten program logs as indented JSON, a hint to call getLogs), which buried the traffic's
 * output during faults; its message and the program's own error line say what happened.
 */
function oneLine(err: unknown): string {
  if (!(err instanceof SendTransactionError)) return describeError(err).replaceAll(/\s*\n\s*/g, ' ');
  const logs = err.transactionError.logs ?? [];
  const programError = logs.findLast((line) => line.includes('Error Code:')) ?? logs.findLast((line) => line.includes('failed:'));
  return `preflight refused it: ${err.transactionError.message}${programError === undefined ? '' : ` (${programError})`}`;
}

function failedToSubmit(options: SubmitOptions, problem: string, signature?: string, err?: string): DevnetError<'DEVNET__FAILED_TO_SUBMIT'> {
  const transaction = signature === undefined ? 'transaction' : `transaction ${signature}`;
  return new DevnetError(
    'DEVNET__FAILED_TO_SUBMIT',
    { chain: options.chain, step: options.step, ...(signature === undefined ? {} : { signature }), ...(err === undefined ? {} : { err }) },
    `devnet ${options.chain} chain: ${options.step} ${transaction} ${problem}`,
  );
}
