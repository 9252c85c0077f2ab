import { afterEach, describe, expect, it } from 'vitest';
import { proposal, signal, startBridge, trackerHeader, type BridgeFixture } from './bridge-fixture.js';
import { depositEntry } from '../../support/deposit-entry.js';
import { startJsonRpcServer, type JsonRpcTestServer, type Reply, type RpcCall } from '../rpc/json-rpc-test-server.js';

/**
 * Two destination endpoints answering one send differently: the primary takes the transaction
 * (it lands) but its answer is lost (HTTP 504); the lagging fallback refuses it in preflight
 * with BlockhashNotFound. The attempt's outcome is unknown, not refused: the signature is
 * watched and found landed, and the votes are signed once.
 */

let fixture: BridgeFixture | undefined;
let fallback: JsonRpcTestServer | undefined;

afterEach(async () => {
  await fixture?.close();
  await fallback?.close();
  fixture = fallback = undefined;
});

const BLOCKHASH_NOT_FOUND: Reply = {
  error: { code: -32002, message: 'Transaction simulation failed', data: { err: 'BlockhashNotFound', logs: [] } },
};

/** An endpoint that serves the primary's reads and refuses every preflight send as a node behind the blockhash would. */
function laggingSender(primaryUrl: () => string) {
  return async (call: RpcCall): Promise<Reply> => {
    if (call.method === 'sendTransaction' && (call.params[1] as { skipPreflight?: boolean }).skipPreflight !== true) return BLOCKHASH_NOT_FOUND;
    const response = await fetch(primaryUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...call }),
    });
    const body = (await response.json()) as Reply;
    return 'error' in body ? { error: body.error } : { result: (body as { result: unknown }).result };
  };
}

describe('mixed endpoint answers to one send', () => {
  it('a 504 from the primary beside a fallback BlockhashNotFound: watched, landed once, never re-signed', async () => {
    let primary = '';
    fallback = await startJsonRpcServer(laggingSender(() => primary));
    fixture = await startBridge({
      source: {
        header: trackerHeader('DepositTracker', { entryCount: 10, ownNext: 0 }),
        entries: Array.from({ length: 10 }, (_, i) => depositEntry(i)),
      },
      target: { header: trackerHeader('WithdrawTracker', { entryCount: 5, ownNext: 5 }), entries: [] },
      targetFallbackUrls: [fallback.url],
    });
    primary = fixture.target.url;
    fixture.target.onSend = (send) => (send.count === 1 ? 'gateway-timeout' : 'none');

    const report = await fixture.chains.ackDeposits([proposal(5), proposal(6)], signal());

    const signed = new Set(fixture.target.sends.map((send) => send.signature));
    expect(signed.size).toBe(1);
    expect(fixture.target.landed).toEqual([...signed]);
    expect(report.transactions).toEqual([{ signature: fixture.target.landed[0], indices: [5, 6] }]);
    expect(fallback.calls.some((call) => call.method === 'sendTransaction')).toBe(true);
  });
});
