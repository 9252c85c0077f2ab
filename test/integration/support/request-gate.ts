import type { RpcFetch } from '../../../src/chain/rpc/rpc-fetch.js';

/**
 * A fetch for one crank's RPC transport that can hold back a single JSON-RPC request: the next
 * call of `method` to `url` waits until the test releases it, then goes to the node unchanged.
 * It lets a test land a transaction of its own at an exact point of a crank's cycle (between
 * its read and its signing), which no timing could arrange reliably.
 */
export interface RequestGate {
  fetch: RpcFetch;
  /** Holds the next `method` request to `url`; `reached` resolves once it is held. */
  holdNext(url: string, method: string): { reached: Promise<void>; release(): void };
}

interface Hold {
  url: string;
  method: string;
  reached(): void;
  released: Promise<void>;
}

export function createRequestGate(): RequestGate {
  let hold: Hold | undefined;

  const fetch: RpcFetch = async (input, init) => {
    const current = hold;
    if (current !== undefined && sameOrigin(input, current.url) && methodOf(init?.body) === current.method) {
      hold = undefined;
      current.reached();
      await untilReleased(current.released, init?.signal);
    }
    return globalThis.fetch(input, init);
  };

  return {
    fetch,
    holdNext(url, method) {
      let reached!: () => void;
      let release!: () => void;
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      hold = { url, method, reached, released };
      return { reached: reachedPromise, release };
    },
  };
}

/** A held request still ends when its caller aborts (the crank stopping, an RPC timeout). */
function untilReleased(released: Promise<void>, signal: AbortSignal | null | undefined): Promise<void> {
  if (signal == null) return released;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void released.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

function sameOrigin(input: Parameters<RpcFetch>[0], url: string): boolean {
  const target = input instanceof Request ? input.url : String(input);
  return new URL(target).origin === new URL(url).origin;
}

function methodOf(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  const parsed = JSON.parse(body) as { method?: unknown };
  return typeof parsed.method === 'string' ? parsed.method : undefined;
}
