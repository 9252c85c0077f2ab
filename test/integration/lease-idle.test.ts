import { Keypair, LAMPORTS_PER_SOL, NonceAccount, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { devnetConnection, submitTransaction } from '../../devnet/world/submit.js';
import { leaseAddress } from '../../src/chain/lease-account.js';
import { sleep } from '../../src/time.js';
import { ensureBuilt } from '../support/server-process.js';
import { waitFor } from '../support/wait-for.js';
import { serverHealth, type AuthorityServer } from './support/authority-server.js';
import { authorityBalances, landedTransactionsPaidBy } from './support/chain-state.js';
import type { DevnetBridge } from './support/devnet-bridge.js';
import { errorLines, metric, startBridge, startServer, takeOvers, UNCANCELLED, waitForRole } from './support/handoff.js';

/**
 * The signing lease on a quiet bridge and against a theft dressed as a lease operation
 * (docs/chain-client.md "The lease"), real servers (`node dist/index.js`) at a 2 s poll,
 * production timing: two instances of one key keep their roles for 90 s of an idle bridge (the
 * holder has nothing to sign, so it is idle, not gone: a standby takes a held lease over only once
 * work has waited the quiet window), and a transfer out of the authority that lists the lease
 * account is a second signer, not a lease operation.
 */

const POLL = { BRIDGE_POLL_INTERVAL_SECS: '2' };
const IDLE_SECONDS = 90;
const FLAGGED_WITHIN_MS = 30_000;

beforeAll(() => {
  ensureBuilt();
}, 120_000);

function leaseValue(b: DevnetBridge): string | undefined {
  const account = b.pair.target.getAccount(leaseAddress(b.authorities[0]!.publicKey, b.world.source.chainId).toBase58());
  return account === undefined || account.data.length === 0 ? undefined : NonceAccount.fromAccountData(Buffer.from(account.data)).nonce;
}

async function roleChanges(server: AuthorityServer): Promise<number> {
  return server.process.logs().filter((record) => /^crank: (taking over|standing by:|the signing lease this server held)/.test(String(record['msg'])))
    .length;
}

describe.concurrent('the signing lease on a quiet bridge, and a lease-shaped theft', () => {
  it(`two instances of one key on an idle bridge for ${IDLE_SECONDS} s at a 2 s poll: 0 role changes, 0 error lines, 0 lease transactions`, async ({
    onTestFinished,
  }) => {
    const b = await startBridge(onTestFinished);
    const holder = await startServer(b, POLL);
    await waitForRole(holder, 'active', 15_000);
    const standby = await startServer(b, POLL);
    await waitFor(
      async () =>
        (await fetch(`${standby.url}/health`).then((r) => r.json() as Promise<{ crank: { lease?: { status: string } } }>)).crank.lease?.status ===
        'waiting',
      {
        timeoutMs: 15_000,
        intervalMs: 200,
        what: 'the standby waiting on the lease the holder holds',
      },
    );
    const value = leaseValue(b);
    const balances = authorityBalances(b, 0);
    const changesBefore = [await roleChanges(holder), await roleChanges(standby)];

    const samples: Array<[string, string]> = [];
    for (let i = 0; i < IDLE_SECONDS; i++) {
      const [h, s] = await Promise.all([serverHealth(holder), serverHealth(standby)]);
      samples.push([h.role, s.role]);
      expect(s.status).toBe('ok');
      await sleep(1_000, UNCANCELLED);
    }

    expect(samples.filter(([h, s]) => h !== 'active' || s !== 'standby')).toEqual([]);
    expect([await roleChanges(holder), await roleChanges(standby)]).toEqual(changesBefore);
    expect(takeOvers(standby)).toEqual([]);
    expect(errorLines(holder)).toEqual([]);
    expect(errorLines(standby)).toEqual([]);
    // Nothing paid: no take-over, no renewal; the lease holds the value the holder took.
    expect(landedTransactionsPaidBy(b, 0, balances)).toBe(0);
    expect(leaseValue(b)).toBe(value);
    expect(await metric(standby, 'bridge_crank_lease_events_total{outcome="took"}')).toBe(0);
    // Standing by on an idle holder's lease is no alarm: BridgeStandbyTooLong reads this gauge.
    expect(await metric(standby, 'bridge_crank_standby_seconds')).toBe(0);
    console.info(`idle bridge: ${samples.length} one-second samples, holder active and the other standby in every one`);
  }, 180_000);

  it(`a transfer out of the authority that lists the lease account is counted as a foreign signature within ${FLAGGED_WITHIN_MS / 1000} s`, async ({
    onTestFinished,
  }) => {
    const b = await startBridge(onTestFinished);
    const holder = await startServer(b, POLL);
    await waitForRole(holder, 'active', 15_000);
    const authority = b.authorities[0]!;
    const transfer = SystemProgram.transfer({
      fromPubkey: authority.publicKey,
      toPubkey: Keypair.generate().publicKey,
      lamports: 5 * LAMPORTS_PER_SOL,
    });
    const lease = leaseAddress(authority.publicKey, b.world.source.chainId);
    const leaseShaped = new TransactionInstruction({ ...transfer, keys: [...transfer.keys, { pubkey: lease, isSigner: false, isWritable: false }] });
    const signal = AbortSignal.timeout(FLAGGED_WITHIN_MS);
    const sentAt = Date.now();
    const signature = await submitTransaction(devnetConnection(b.pair.target.url, signal), [leaseShaped], [authority], {
      chain: 'target',
      step: 'lease-shaped transfer',
      signal,
    });
    await waitFor(async () => (await metric(holder, 'bridge_foreign_signatures_total{chain="target"}')) >= 1, {
      timeoutMs: FLAGGED_WITHIN_MS,
      intervalMs: 250,
      what: 'the lease-shaped transfer counted as a foreign signature',
    });
    const flaggedMs = Date.now() - sentAt;
    expect(flaggedMs).toBeLessThanOrEqual(FLAGGED_WITHIN_MS);
    expect(holder.process.logs().some((record) => JSON.stringify(record).includes(signature))).toBe(true);
    console.info(`lease-shaped transfer: flagged as a foreign signature ${flaggedMs} ms after it was sent`);
  }, 120_000);
});
