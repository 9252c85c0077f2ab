import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Keypair } from '@solana/web3.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runRound, startBridgeCranks } from '../integration/support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from '../integration/support/devnet-bridge.js';
import { deposit } from '../integration/support/transactions.js';
import { startTestApp } from '../support/http-app.js';
import { FIXTURE_PUBLIC_KEY, keypairDir } from '../support/keypair-files.js';
import { ensureBuilt } from '../support/server-process.js';
import { ops, secretForms, serverEnv } from './ops-cli.js';

/**
 * `npm run ops` as operators run it: the built CLI (dist/ops/cli.js) spawned against a devnet
 * with the server's variables; exit codes, --json parsed and checked, the human output's key
 * facts, and never a byte of the keypair's secret.
 */

let bridge: DevnetBridge | undefined;

beforeAll(ensureBuilt, 180_000);
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('npm run ops', () => {
  it('status, transfer and escalate against a devnet where one of two needed authorities runs', async () => {
    bridge = await startDevnetBridge();
    const [live] = await startBridgeCranks(bridge, [0]);
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    for (const amount of [100n, 200n]) await deposit(bridge, { amount, sourceMint: mint, recipient: Keypair.generate().publicKey.toBase58() });
    await runRound([live!]);
    await deposit(bridge, { amount: 300n, sourceMint: mint, recipient: Keypair.generate().publicKey.toBase58() });
    const env = serverEnv(bridge, 0);
    const authorities = bridge.authorities.map((key) => key.publicKey.toBase58());

    const status = await ops(['status', '--json'], env);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as Record<string, unknown> & { destination: { authorities: unknown[] }; source_slot_ms: number };
    expect(report).toMatchObject({
      authority: authorities[0],
      ahead: 'source',
      deposits_without_destination_entry: 1,
      phases: { deposit: 1, ack_deposit: 2, withdraw: 0, ack_withdraw: 0, cleanup_deposit: 0, done: 0 },
      oldest: { deposit: 2, ack_deposit: 0 },
      source: { entry_count: '3', settled_prefix: '0' },
      destination: { entry_count: '2' },
    });
    expect(report.destination.authorities[0]).toEqual({ authority: authorities[0], next_index: '2', last_vote: 'Yes' });
    // Ages from deposit_slot to the read, in source slots, and in seconds at the slot time status measured (50 ms timer slots, slower under load).
    expect(report.source_slot_ms).toBeGreaterThan(5);
    expect(report.source_slot_ms).toBeLessThan(1_000);
    const { deposit: newest, ack_deposit: oldest } = report.oldest_age as Record<string, { slots: number; seconds: number }>;
    expect(newest!.slots).toBeGreaterThan(0);
    expect(oldest!.slots).toBeGreaterThan(newest!.slots);
    expect(oldest!.seconds).toBe(Math.round((oldest!.slots * report.source_slot_ms) / 1000));
    const human = await ops(['status'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`${authorities[0]} (this server)`);
    expect(report['signer']).toEqual({ kind: 'file' });
    expect(human.stdout).toContain(`this server signs as ${authorities[0]} with a keypair file`);
    expect(human.stdout).toMatch(/ack_deposit\s+│ 2\s+│ 0\s+│ \d+ s \(\d+ slots\)/);
    expect(human.stdout).toMatch(/waited: since the deposit \(deposit_slot\), at \d+ ms per source slot as measured/);
    expect(human.stdout).toContain('ahead: source (1 deposits have no destination entry yet)');

    const one = await ops(['transfer', '1', '--json'], env);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({
      index: 1,
      phase: 'ack_deposit',
      rule_3_1_holds: false,
      destination: { status: 'Voting', voters: { yes: [authorities[0]], no: [] } },
      recovery: { symptom: 'Deposit exists, nothing on destination' },
    });
    const oneHuman = await ops(['transfer', '1'], env);
    expect(oneHuman.stdout).toContain('phase: ack_deposit');
    expect(oneHuman.stdout).toContain('rule 3.1 (result relayable by ack_withdraw): does not hold');
    expect(oneHuman.stdout).toContain('SPEC §7: Deposit exists, nothing on destination');

    const server = await startTestApp();
    try {
      const escalation = await ops(['escalate', '1', '--health', `${server.url}/health`], env);
      expect(escalation.code, escalation.stderr).toBe(0);
      const document = JSON.parse(escalation.stdout) as Record<string, unknown> & { recent_signatures: { value: { destination: unknown } } };
      expect(document).toMatchObject({
        source_chain_id: bridge.world.source.chainId,
        target_chain_id: bridge.world.target.chainId,
        authority: authorities[0],
        source_deposit_entry_id: 1,
        destination_withdraw_entry_id: 1,
        deposit_status: 'Initialized',
        withdraw_status: 'Voting',
        cleanup_ran: false,
        health: { origin: server.url, error: null, value: { status: 'ok', service: 'bridge-operator-server' } },
      });
      // The authority's own transactions, newest first: on the destination its ack_deposit vote.
      const landed = {
        signature: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/),
        slot: expect.any(Number),
        err: null,
        block_time: expect.any(Number),
      };
      expect(document.recent_signatures).toMatchObject({
        error: null,
        value: { source: expect.arrayContaining([landed]), destination: expect.arrayContaining([landed]) },
      });
      const destinationSlots = (document.recent_signatures.value.destination as { slot: number }[]).map((one) => one.slot);
      expect(destinationSlots).toEqual([...destinationSlots].sort((a, b) => b - a));
    } finally {
      await server.close();
    }
    const unreachableHealth = JSON.parse((await ops(['escalate', '2', '--health', 'http://127.0.0.1:9/health'], env)).stdout) as Record<
      string,
      unknown
    >;
    expect(unreachableHealth.health).toMatchObject({ value: null, origin: 'http://127.0.0.1:9' });
    expect(unreachableHealth.destination_withdraw_entry_id).toBeNull();

    // A /health that answers with terminal controls: the human output carries them escaped.
    const hostile = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok\u009b2J\u202eexe.txt\u2028forged' }));
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const hostileOrigin = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
      const shown = await ops(['escalate', '1', '--health', `http://user:secret-pass@${hostileOrigin.slice(7)}/health?token=secret-token`], env);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2028\u2029]/);
      expect(shown.stdout).not.toMatch(/secret/);
      expect((JSON.parse(shown.stdout) as Record<string, unknown>).health).toEqual({
        origin: hostileOrigin,
        error: null,
        value: { status: 'ok\u009b2J\u202eexe.txt\u2028forged' },
      });
    } finally {
      await new Promise((resolve) => hostile.close(resolve));
    }

    const outputs = [status, human, one, oneHuman].map((run) => run.stdout + run.stderr).join('\n');
    for (const form of secretForms(env.BRIDGE_AUTHORITY_KEYPAIR!)) expect(outputs).not.toContain(form);
  });

  it('exit codes: 3 for an index past entry_count, 1 for bad usage or configuration, 2 for an unreachable chain', async () => {
    bridge = await startDevnetBridge();
    const env = serverEnv(bridge, 0);

    const missing = await ops(['transfer', '5', '--json'], env);
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout)).toEqual({
      error: 'TRANSFER__NOT_FOUND',
      message: 'transfer 5 does not exist: the source DepositTracker has 0 entries',
    });
    expect((await ops(['transfer', '-1'], env)).code).toBe(1);
    const badIndex = await ops(['transfer', 'abc'], env);
    expect(badIndex).toMatchObject({ code: 1, stderr: expect.stringContaining('index: expected a non-negative integer, got "abc"') });
    expect((await ops(['nope'], env)).code).toBe(1);
    expect((await ops(['status'], {})).stderr).toContain('BRIDGE_SOURCE_RPC_URL');
    expect((await ops(['status'], { ...env, BRIDGE_SOURCE_CHAIN_ID: 'x' })).code).toBe(1);
    expect((await ops(['status'], { ...env, BRIDGE_DRY_RUN: 'true' })).code).toBe(0);

    const unreachable = await ops(['status'], {
      ...env,
      BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:9/secret-path?api-key=k',
      BRIDGE_RPC_TIMEOUT_MS: '2000',
    });
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).not.toContain('secret-path');
    expect(unreachable.stderr).not.toContain('api-key');
  });
});

describe('npm run ops -- signer', () => {
  it('prints the base58 key of a keypair file from BRIDGE_AUTHORITY_KEYPAIR alone, and says which variable is missing', async () => {
    const files = keypairDir();
    try {
      const path = files.copyFixture(0o600);
      const human = await ops(['signer'], { BRIDGE_AUTHORITY_KEYPAIR: path });
      expect(human).toEqual({ code: 0, stdout: `${FIXTURE_PUBLIC_KEY}\n(held by a keypair file)\n`, stderr: '' });
      const json = await ops(['signer', '--json'], { BRIDGE_AUTHORITY_KEYPAIR: path });
      expect(JSON.parse(json.stdout)).toEqual({ authority: FIXTURE_PUBLIC_KEY, signer: { kind: 'file' } });
      for (const form of secretForms(path)) expect(human.stdout + json.stdout).not.toContain(form);
    } finally {
      files.remove();
    }
    const missing = await ops(['signer'], {});
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringMatching(/^ops: BRIDGE_AUTHORITY_KEYPAIR: not set;/) });
  });
});
