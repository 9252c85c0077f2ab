import { Connection, Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startChainPair, type ChainPair } from '../../devnet/chain-pair.js';
import { startDevnetNode } from '../../devnet/node.js';
import { isDevnetError } from '../../devnet/devnet-error.js';
import { rejection } from '../support/rejection.js';

const pairs: ChainPair[] = [];

afterEach(async () => {
  for (const pair of pairs.splice(0)) await pair.close();
});

async function pair(options: Parameters<typeof startChainPair>[0] = {}): Promise<ChainPair> {
  const started = await startChainPair({ slotIntervalMs: 0, ...options });
  pairs.push(started);
  return started;
}

describe('startChainPair', () => {
  it('starts source chain 1 and target chain 2 on loopback ports with the default program', async () => {
    const { source, target } = await pair();
    expect([source.chainId, target.chainId]).toEqual([1, 2]);
    expect(source.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(source.port).not.toBe(target.port);
    expect(source.programId.toBase58()).toBe('BridgeProgram111111111111111111111111111111');
    expect(await new Connection(target.url).getSlot()).toBe(target.slot);
  });

  it('rejects equal chain ids and reports a port in use naming the chain and port', async () => {
    const error = await rejection(startChainPair({ sourceChainId: 5, targetChainId: 5 }));
    expect(isDevnetError(error, 'DEVNET__INVALID_OPTION')).toBe(true);
    const { source } = await pair();
    const busy = await rejection(startChainPair({ targetPort: source.port, slotIntervalMs: 0 }));
    expect(isDevnetError(busy, 'DEVNET__FAILED_TO_LISTEN')).toBe(true);
    expect((busy as Error).message).toContain(`target chain cannot listen on 127.0.0.1:${source.port}`);
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    expect(await rejection(startChainPair({ signal: controller.signal }))).toEqual(new Error('stop'));
  });
});

describe('DevnetNode', () => {
  it('airdrops, hands out account copies, advances slots, pauses and resumes', async () => {
    const { source } = await pair();
    const key = Keypair.generate().publicKey;
    const slot = source.slot;
    source.airdrop(key, 42n);
    expect(source.slot).toBe(slot + 1);
    const copy = source.getAccount(key)!;
    expect(copy.lamports).toBe(42n);
    const program = source.getAccount(source.programId)!;
    program.data[0] = 99;
    expect(source.getAccount(source.programId)!.data[0]).not.toBe(99);
    source.advanceSlots(10);
    expect(source.slot).toBe(slot + 11);
    source.pause();
    source.airdrop(key, 1n);
    expect(source.getAccount(key)!.lamports).toBe(42n);
    source.resume();
    expect(source.getAccount(key)!.lamports).toBe(43n);
    expect(() => source.airdrop(key, 0)).toThrow(/lamports/);
  });

  it('close() stops serving, closes kept-alive connections, and can be called twice', async () => {
    const node = await startDevnetNode({ name: 'source', chainId: 1, slotIntervalMs: 0 });
    const connection = new Connection(node.url);
    await connection.getSlot();
    await Promise.all([node.close(), node.close()]);
    await expect(fetch(node.url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
