import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { BridgeError } from '../../errors.js';

/**
 * Every call into a PKCS#11 module runs on a worker thread of its own, never on the event loop:
 * a network HSM that stops answering blocks that thread, not /health, not the crank's timers.
 * Each call is cut after `timeoutMs` (PKCS11_CALL_TIMEOUT_MS); the thread it hangs in cannot be
 * interrupted (a native call has no cancellation), so it is abandoned (asked to terminate, which
 * it does when the call returns) and the next call starts a fresh thread that loads the module
 * again. At most MAX_ABANDONED_THREADS hung threads are left behind; past that every call fails
 * at once, until one returns, rather than pile up threads.
 *
 * The worker runs from a string so that it is the same code from dist/ and from the TypeScript
 * sources the tests run: it only calls the binding's method by name and posts back the result.
 */

const PKCS11_CALL_TIMEOUT_MS = 10_000;
const MAX_ABANDONED_THREADS = 2;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const pkcs11js = require(workerData.binding);
const module = new pkcs11js.PKCS11();
parentPort.on('message', ({ id, method, args }) => {
  try {
    parentPort.postMessage({ id, value: module[method](...args) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message) });
  }
});
`;

/** A failure the module reported (its message a CKR_ name when it is a PKCS#11 result). */
export class Pkcs11CallError extends Error {}

interface Pending {
  resolve(value: unknown): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
}

export class Pkcs11Thread {
  readonly #modulePath: string;
  readonly #timeoutMs: number;
  readonly #binding = createRequire(import.meta.url).resolve('pkcs11js');
  #worker: Worker | undefined;
  #started: Promise<void> | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #abandoned = 0;

  constructor(modulePath: string, timeoutMs = PKCS11_CALL_TIMEOUT_MS) {
    this.#modulePath = modulePath;
    this.#timeoutMs = timeoutMs;
  }

  /** Loads the module on a thread (the first call, and the first after a hung one, does) and initializes it. */
  start(initialize: () => Promise<void>): Promise<void> {
    if (this.#started !== undefined) return this.#started;
    const started = this.#spawn(initialize);
    this.#started = started;
    // A failed start is not kept: the next signature tries again.
    started.catch(() => {
      if (this.#started === started) this.#started = undefined;
    });
    return started;
  }

  async call<T>(method: string, ...args: unknown[]): Promise<T> {
    const worker = this.#worker;
    if (worker === undefined) throw unresponsive('no thread is running the module (a call hung before); the next signature loads it again');
    return (await this.#post(worker, method, args)) as T;
  }

  /** Stops the thread (server shutdown, tests); a hung one exits when its call returns. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#started = undefined;
    await worker?.terminate();
  }

  async #spawn(initialize: () => Promise<void>): Promise<void> {
    if (this.#abandoned >= MAX_ABANDONED_THREADS) {
      throw unresponsive(
        `${this.#abandoned} calls into the module have hung past ${this.#timeoutMs} ms and not returned; no new thread until one does (restart the server if the HSM is back and this persists)`,
      );
    }
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { binding: this.#binding } });
    worker.on('message', ({ id, value, error }: { id: number; value?: unknown; error?: string }) => {
      const pending = this.#pending.get(id);
      if (pending === undefined) return;
      this.#settle(worker, id, pending);
      if (error === undefined) pending.resolve(revive(value));
      else pending.reject(new Pkcs11CallError(error));
    });
    worker.on('error', () => this.#abandon(worker));
    this.#worker = worker;
    try {
      await this.#post(worker, 'load', [this.#modulePath]);
      await initialize();
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  /**
   * The thread holds the process open only while a call waits on it: an idle module must not
   * keep the ops CLI or a shutting-down server alive, and a pending call must.
   */
  #post(worker: Worker, method: string, args: unknown[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      worker.ref();
      const timer = setTimeout(() => {
        this.#abandon(worker);
      }, this.#timeoutMs);
      timer.unref();
      this.#pending.set(id, { resolve, reject, timer });
      worker.postMessage({ id, method, args });
    });
  }

  #settle(worker: Worker, id: number, pending: Pending): void {
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (this.#pending.size === 0) worker.unref();
  }

  /** The thread is stuck in the module: every call waiting on it fails; it exits whenever its call returns. */
  #abandon(worker: Worker): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#started = undefined;
    this.#abandoned++;
    worker.once('exit', () => this.#abandoned--);
    void worker.terminate();
    for (const [id, pending] of this.#pending) {
      this.#settle(worker, id, pending);
      pending.reject(unresponsive(`the module did not answer within ${this.#timeoutMs} ms; the next signature loads it on a new thread`));
    }
    worker.unref();
  }
}

function unresponsive(message: string): BridgeError<'SIGNER__UNAVAILABLE'> {
  return new BridgeError('SIGNER__UNAVAILABLE', { reason: 'session_lost' }, { signer: 'PKCS#11', detail: message });
}

/** Buffers cross threads as Uint8Arrays: make them Buffers again, at any depth. */
function revive(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value)) return value.map(revive);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, revive(item)]));
  return value;
}
