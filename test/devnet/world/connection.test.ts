import { afterEach, describe, expect, it } from 'vitest';
import { startChainPair, type ChainPair } from '../../../devnet/chain-pair.js';
import { devnetConnection } from '../../../devnet/world/submit.js';

/**
 * devnetConnection under a long-lived signal (the traffic's, a bench's users'): thousands of
 * requests must not pile abort listeners onto it. fetch keeps one on the signal it is given
 * until the request is garbage collected, so each request gets a signal of its own.
 */

let pair: ChainPair | undefined;

afterEach(async () => {
  await pair?.close();
  pair = undefined;
});

describe('devnetConnection', () => {
  it('2,000 requests under one long-lived signal raise no MaxListenersExceededWarning', { timeout: 60_000 }, async () => {
    pair = await startChainPair();
    const warnings: string[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    try {
      const connection = devnetConnection(pair.source.url, new AbortController().signal);
      for (let round = 0; round < 4; round++) await Promise.all(Array.from({ length: 500 }, () => connection.getSlot()));
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('still aborts a request when the long-lived signal aborts', async () => {
    pair = await startChainPair();
    const stopping = new AbortController();
    const connection = devnetConnection(pair.source.url, stopping.signal);
    pair.source.faults.set({ methods: { getSlot: { latencyMs: 5_000 } } });
    const pending = connection.getSlot();
    stopping.abort(new Error('traffic stopped'));
    await expect(pending).rejects.toThrow();
  });
});
