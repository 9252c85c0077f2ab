import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PublicKey } from '@solana/web3.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serverEnv } from '../../devnet/server-env.js';
import { ServerProcess, ensureBuilt } from '../support/server-process.js';
import { loadAuthoritySigner } from '../../src/signer/open-signer.js';
import { closeAllSessions, createSoftHsm, TOKEN_PIN, type SoftHsm } from '../support/softhsm.js';
import { waitFor } from '../support/wait-for.js';
import { crankOnce } from './support/authority-server.js';
import { depositTracker, votersMask, withdrawTracker } from './support/chain-state.js';
import { banksCaughtUp, failedAttemptErrors, startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled } from './support/expectations.js';
import { claim, deposit } from './support/transactions.js';

/**
 * The authority key in a SoftHSM token (issue 23): real servers (`node dist/index.js`) sign
 * through PKCS#11 against the devnet, and refuse to start, before they listen, on every
 * problem with the token. The token store is this file's own temporary directory (SOFTHSM2_CONF).
 */

// Nothing answers here: the refusals happen before any RPC call.
const UNREACHABLE_RPC = {
  BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:9',
  BRIDGE_TARGET_RPC_URL: 'http://127.0.0.1:9',
  BRIDGE_SOURCE_CHAIN_ID: '1',
  BRIDGE_TARGET_CHAIN_ID: '2',
};

const execFileAsync = promisify(execFile);
/** A cycle here signs through SoftHSM: a longer wait for its report than a key file's. */
const CYCLE_TIMEOUT_MS = 30_000;
const OPS_CLI = fileURLToPath(new URL('../../dist/ops/cli.js', import.meta.url));

let hsm: SoftHsm;
let bridge: DevnetBridge | undefined;
const servers: ServerProcess[] = [];

beforeAll(() => {
  ensureBuilt();
  hsm = createSoftHsm();
  hsm.initToken('bridge');
  hsm.generateKey('bridge', 'generated', '02', 'EC:edwards25519');
  hsm.generateKey('bridge', 'rsa', '03', 'rsa:1024');
}, 120_000);

afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  await bridge?.close();
  bridge = undefined;
});

// Vitest runs this file in a worker it shares with other files (vitest.config.ts): what it sets, it unsets.
const softHsmConfBefore = process.env['SOFTHSM2_CONF'];
afterAll(() => {
  hsm.remove();
  if (softHsmConfBefore === undefined) delete process.env['SOFTHSM2_CONF'];
  else process.env['SOFTHSM2_CONF'] = softHsmConfBefore;
});

/** Authority 0's server variables, its key named by a URI with the PIN in it: the worst case for leaks. */
function serverEnvFor(b: DevnetBridge): Record<string, string> {
  return { ...serverEnv(b.world, 0, 0), BRIDGE_AUTHORITY_KEYPAIR: hsm.uri('token=bridge;object=authority', `pin-value=${TOKEN_PIN}`) };
}

function startServer(env: Record<string, string>): ServerProcess {
  const server = new ServerProcess({
    ...env,
    ...hsm.env,
    BRIDGE_POLL_INTERVAL_SECS: '3600',
    BRIDGE_RPC_TIMEOUT_MS: '5000',
    BRIDGE_LOG_LEVEL: 'debug',
  });
  servers.push(server);
  return server;
}

async function text(url: string): Promise<string> {
  return (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text();
}

describe('a server whose authority key is in a PKCS#11 token', () => {
  it('carries a transfer through all five phases signed through the token; the PIN is in no log line, /health or /metrics', async () => {
    const b = (bridge = await startDevnetBridge());
    // Imported as an operator would with softhsm2-util: CKA_EC_POINT as 32 raw bytes.
    hsm.importKeypair('bridge', 'authority', '01', b.authorities[0]!);
    const server = startServer(serverEnvFor(b));
    const url = await server.listening();
    const [other] = await startBridgeCranks(b, [1]);
    await crankOnce(url, CYCLE_TIMEOUT_MS);

    await deposit(b, { amount: 500n, sourceMint: b.world.tokenPairs.normal.sourceMint });
    expect(await crankOnce(url, CYCLE_TIMEOUT_MS)).toMatchObject({ ack_deposit_attempted: true });
    expect(withdrawTracker(b).entries[0]).toMatchObject({ status: 'Voting', yesVotes: votersMask(0) });
    await other!.service.runOnce();
    expect(withdrawTracker(b).entries[0]).toMatchObject({ status: 'Finalized', yesVotes: votersMask(0, 1) });
    await claim(b, 0);
    expect(await crankOnce(url, CYCLE_TIMEOUT_MS)).toMatchObject({ ack_withdraw_attempted: true });
    await other!.service.runOnce();
    // The server reads the source at finalized: the entry's Finalized status must reach that bank before its cycle cleans it up.
    await banksCaughtUp(b);
    await crankOnce(url, CYCLE_TIMEOUT_MS);
    expect(depositTracker(b).entries[0]).toMatchObject({ status: 'Finalized', yesVotes: votersMask(0, 1), cleanupCompleted: true });
    expectSettled(b, 1, [0, 1]);

    const health = JSON.parse(await text(`${url}/health`)) as { status: string; crank: { signer: unknown; last_error: string | null } };
    expect(health).toMatchObject({ status: 'ok', crank: { last_error: null, signer: { kind: 'pkcs11', token: 'bridge', session: 'open' } } });
    const started = await server.waitForLog((record) => record['msg'] === 'bridge server listening');
    expect(started['crank']).toMatchObject({ authority: b.authorities[0]!.publicKey.toBase58(), signer: { kind: 'pkcs11', token: 'bridge' } });
    const everything = [server.stdout(), server.stderr(), JSON.stringify(health), await text(`${url}/metrics`)].join('\n');
    expect(server.logs().filter((record) => record['msg'] === 'transaction landed').length).toBeGreaterThanOrEqual(3);
    expect(everything).not.toContain(TOKEN_PIN);

    // The ops CLI opens the signer as the server does, and names the token, never the PIN.
    // Asynchronously: the devnet answers from this process's event loop.
    const ops = await execFileAsync(process.execPath, [OPS_CLI, 'status', '--json'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...serverEnvFor(b), ...hsm.env },
      timeout: 30_000,
    });
    expect(JSON.parse(ops.stdout)).toMatchObject({
      authority: b.authorities[0]!.publicKey.toBase58(),
      signer: { kind: 'pkcs11', token: 'bridge', session: 'open' },
    });
    expect(ops.stdout + ops.stderr).not.toContain(TOKEN_PIN);
  }, 120_000);

  it('starts with a key generated inside the token (pkcs11-tool: CKA_EC_POINT as a DER OCTET STRING), selected by id', async () => {
    const server = startServer({ ...UNREACHABLE_RPC, BRIDGE_AUTHORITY_KEYPAIR: hsm.uri('token=bridge;id=%02', `pin-source=file:${hsm.pinFile()}`) });
    await server.listening();
    const started = await server.waitForLog((record) => record['msg'] === 'bridge server listening');
    const crank = started['crank'] as { authority: string; signer: unknown };
    // The server proved the pair with one signature before it listened, and signs as the key the token lists.
    const listed = new PublicKey(hsm.listedPublicKey('bridge', 'generated')).toBase58();
    expect(crank).toEqual({ ...crank, authority: listed, signer: { kind: 'pkcs11', token: 'bridge', session: 'open' } });
  }, 60_000);
});

describe('a lost PKCS#11 session (a token removed, an HSM restarted)', () => {
  it('fails one attempt as retryable and /health says so; the next attempt re-opens, logs in and lands the vote', async () => {
    const b = (bridge = await startDevnetBridge());
    hsm.importKeypair('bridge', 'authority-restarted', '11', b.authorities[0]!);
    // In this process: the test reaches the module's sessions as an HSM restart would.
    process.env['SOFTHSM2_CONF'] = hsm.env.SOFTHSM2_CONF;
    const { signer } = await loadAuthoritySigner(hsm.uri('token=bridge;object=authority-restarted', `pin-source=file:${hsm.pinFile()}`));
    const [crank] = await startBridgeCranks(b, [0], { signer, maxAttempts: 3, retryBackoffMs: 1_000 });
    await deposit(b, { amount: 500n, sourceMint: b.world.tokenPairs.normal.sourceMint });

    closeAllSessions(hsm.modulePath);
    const cycle = crank!.service.runOnce();
    const lost = () => {
      const described = crank!.service.health().signer;
      return described?.kind === 'pkcs11' && described.session === 'lost';
    };
    // The signer marks its session lost as the signature fails; the crank records the failed
    // attempt a moment later, when the rejection reaches the machine.
    await waitFor(() => lost() && crank!.service.status() === 'degraded', {
      timeoutMs: 10_000,
      what: 'the signer to report its session lost and /health to say degraded',
    });
    expect(crank!.service.health().last_error).toMatch(/attempt 1 of 3 failed: .*PKCS#11: the token refused to sign \(CKR_SESSION_HANDLE_INVALID\)/);

    expect(await cycle).toMatchObject({ ack_deposit_attempted: true });
    expect(withdrawTracker(b).entries[0]).toMatchObject({ status: 'Voting', yesVotes: votersMask(0) });
    expect(failedAttemptErrors(crank!)).toEqual([expect.stringContaining('CKR_SESSION_HANDLE_INVALID')]);
    expect(crank!.service.health()).toMatchObject({ last_error: null, signer: { kind: 'pkcs11', token: 'bridge', session: 'open' } });
  }, 60_000);
});

describe('a token problem stops the server before it listens: exit 1, one line naming BRIDGE_AUTHORITY_KEYPAIR', () => {
  it.each([
    [
      'a wrong PIN',
      () => hsm.uri('token=bridge;object=generated', `pin-source=file:${hsm.pinFile('wrong-pin')}`),
      'the token refused the PIN (CKR_PIN_INCORRECT)',
    ],
    [
      'an unknown key label',
      () => hsm.uri('token=bridge;object=no-such-key', `pin-source=file:${hsm.pinFile()}`),
      'no private key matches object="no-such-key" in the token',
    ],
    [
      'a module path that does not exist',
      () => `pkcs11:token=bridge;object=generated?module-path=/nonexistent/libvendor-pkcs11.so&pin-value=${TOKEN_PIN}`,
      'module-path "/nonexistent/libvendor-pkcs11.so" cannot be loaded',
    ],
    ['a key that is not Ed25519', () => hsm.uri('token=bridge;object=rsa', `pin-value=${TOKEN_PIN}`), 'the key is not an Ed25519 key'],
  ])(
    '%s',
    async (_, uri, problem) => {
      const server = startServer({ ...UNREACHABLE_RPC, BRIDGE_AUTHORITY_KEYPAIR: uri() });
      expect(await server.exited).toEqual({ code: 1, signal: null });
      const lines = server
        .stderr()
        .split('\n')
        .filter((line) => line !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]!.startsWith('BRIDGE_AUTHORITY_KEYPAIR: PKCS#11: ')).toBe(true);
      expect(lines[0]).toContain(problem);
      expect(server.stdout()).toBe('');
      expect(server.stderr()).not.toContain(TOKEN_PIN);
    },
    60_000,
  );
});
