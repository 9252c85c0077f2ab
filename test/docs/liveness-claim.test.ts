import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { chainBounds } from '../../src/chain/client/chain-bounds.js';
import { worstCaseCycleMs } from '../../src/machines/delays.js';

/** docs/operating.md states when the liveness probe restarts a stuck crank with the defaults: the figure is the code's. */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

it("the liveness probe's delay stated in docs/operating.md is the default worst-case cycle", () => {
  const text = readFileSync(`${ROOT}docs/operating.md`, 'utf8');
  const stated = /which with the\ndefault settings is (\d+) minutes/.exec(text);
  expect(stated, 'docs/operating.md states the default worst-case cycle in minutes').not.toBeNull();
  // The defaults of BRIDGE_CRANK_MAX_ATTEMPTS, BRIDGE_CRANK_RETRY_BACKOFF_MS and BRIDGE_RPC_TIMEOUT_MS (docs/configuration.md).
  const worstMs = worstCaseCycleMs({ maxAttempts: 3, retryBackoffMs: 1000 }, chainBounds({ rpcTimeoutMs: 10_000 }));
  expect(Number(stated![1])).toBe(Math.round(worstMs / 60_000));
});
