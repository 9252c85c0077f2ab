import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { TOKEN_RENEWAL_OUTCOMES, type SignerObserver, type TokenRenewalOutcome } from '../../../src/signer/authority-signer.js';
import { openRemoteSigner } from '../../../src/signer/remote/remote-signer.js';
import { tokenRenewalReport } from '../../../src/signer/token-renewal-report.js';
import { TokenLease, type VaultCall } from '../../../src/signer/remote/vault-token-lease.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { vaultTransitService } from '../../../src/signer/remote/vault-transit.js';
import { loadAuthoritySigner } from '../../../src/signer/open-signer.js';
import { isBridgeError } from '../../../src/errors.js';
import { loopbackCertificate, startKeyServiceFake, VAULT_TOKEN, type KeyServiceFake } from '../../support/key-service-fakes.js';
import { keypairDir } from '../../support/keypair-files.js';
import { leakedFragments } from '../../support/secret-fragments.js';
import { waitFor } from '../../support/wait-for.js';
import { captureLogs, type CapturedLogs } from '../../support/log-capture.js';
import { metricSample } from '../../support/metric-value.js';

/**
 * Vault transit as an operator runs it (issue 40 item 6): the token re-read when its file
 * changes and after a 403, renewed while renewable, the operator's CA honoured, no redirect
 * followed to another origin, plain http only to loopback, and no control character of a token
 * or of Vault's answer ever printed. Against the local fake (test/support/key-service-fakes.ts).
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function vault(options: Parameters<typeof startKeyServiceFake>[2] = {}): Promise<KeyServiceFake> {
  const fake = await startKeyServiceFake('vault-transit', Keypair.generate(), options);
  cleanups.push(() => fake.close());
  return fake;
}

function tempFiles(): ReturnType<typeof keypairDir> {
  const files = keypairDir();
  cleanups.push(() => files.remove());
  return files;
}

async function problemOf(uri: string, env: NodeJS.ProcessEnv): Promise<string> {
  const err = await loadAuthoritySigner(uri, env).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (isBridgeError(err, 'CONFIG__INVALID') && err.context.problems.length === 1) return err.context.problems[0]!;
  throw new Error(`expected one CONFIG__INVALID line, got ${String(err)}`);
}

/** Reports of `target` (a signer, a key service, a lease) into captured logs and a fresh registry, as the server wires them. */
function observed(target: { observe?(observer: SignerObserver): void }): { logs: CapturedLogs; metrics: Metrics } {
  const logs = captureLogs('info');
  const metrics = createMetrics(new Registry());
  target.observe?.(tokenRenewalReport(logs.logger, metrics));
  return { logs, metrics };
}

async function renewals(metrics: Metrics): Promise<Record<TokenRenewalOutcome, number>> {
  const counts = await Promise.all(TOKEN_RENEWAL_OUTCOMES.map((outcome) => metricSample(metrics.signerTokenRenewals, { outcome })));
  // Every outcome has its sample from the start (a 0), so that increase() counts the first one.
  return Object.fromEntries(TOKEN_RENEWAL_OUTCOMES.map((outcome, i) => [outcome, counts[i]])) as Record<TokenRenewalOutcome, number>;
}

const tokensSent = (fake: KeyServiceFake, operation: string) => fake.requests.filter((r) => r.operation === operation).map((r) => r.authorization);

describe('the token', () => {
  it('is read again from its token-source file when the file changes (a rotation by Vault Agent or a secret volume)', async () => {
    const fake = await vault();
    const files = tempFiles();
    const tokenFile = files.write('vault-token', `${VAULT_TOKEN}\n`);
    const { signer } = await loadAuthoritySigner(`${fake.uri}?token-source=file:${tokenFile}`, { VAULT_ADDR: fake.url });
    const rotated = 'hvs.rotated-token-71c2';
    // Written beside it and renamed over it, as an atomic writer does.
    writeFileSync(join(files.dir, 'next'), `${rotated}\n`, { mode: 0o600 });
    renameSync(join(files.dir, 'next'), tokenFile);
    fake.vault.token = rotated;
    expect(await signer.sign(randomBytes(32))).toHaveLength(64);
    expect(tokensSent(fake, 'sign').at(-1)).toBe(rotated);
  });

  it('is asked for again after a 403, and the call is tried once more only with another token', async () => {
    const fake = await vault();
    // A source whose change goes unseen until it is asked to read again (a file rewritten within its timestamps' resolution).
    let held = VAULT_TOKEN;
    let read = held;
    const token = {
      current(reread = false) {
        if (reread) read = held;
        return read;
      },
    };
    const signer = await openRemoteSigner(vaultTransitService({ address: fake.url, token, mount: 'transit', key: 'bridge-authority' }));
    held = 'hvs.new-token-after-403';
    fake.vault.token = held;
    expect(await signer.sign(randomBytes(32))).toHaveLength(64);
    expect(tokensSent(fake, 'sign').slice(-2)).toEqual([VAULT_TOKEN, held]);
    // The same token again after a 403: refused once, final, not tried a second time.
    fake.vault.token = 'hvs.revoked-everything';
    const before = tokensSent(fake, 'sign').length;
    const denied = await signer.sign(randomBytes(32)).catch((err: unknown) => err);
    expect(isBridgeError(denied, 'SIGNER__UNAVAILABLE') && denied.context.reason).toBe('permission_denied');
    expect(tokensSent(fake, 'sign').length - before).toBe(1);
  });

  it('is renewed (renew-self) while Vault says it is renewable, and only looked up when it is not', async () => {
    const renewable = await vault();
    renewable.vault.ttlSecs = 2;
    await loadAuthoritySigner(renewable.uri, renewable.env);
    // Renewed at half its 2 s lease, then again at half of the renewed lease.
    await waitFor(() => tokensSent(renewable, 'renew-self').length >= 2, { timeoutMs: 5_000, what: 'two renewals of a 2 s token' });
    expect(tokensSent(renewable, 'lookup-self')).toEqual([VAULT_TOKEN]);

    const root = await vault();
    await loadAuthoritySigner(root.uri, root.env);
    await waitFor(() => tokensSent(root, 'lookup-self').length === 1, { timeoutMs: 5_000, what: 'the lookup of a root token' });
    // A bounded wait of more than the renewable token's first renewal: nothing more is asked.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(tokensSent(root, 'renew-self')).toEqual([]);
  });

  it('is no longer renewed once a renewal does not extend it (its max TTL reached)', async () => {
    const capped = await vault();
    capped.vault.ttlSecs = 2;
    const { signer } = await loadAuthoritySigner(capped.uri, capped.env);
    const { logs, metrics } = observed(signer);
    await waitFor(() => tokensSent(capped, 'renew-self').length === 1, { timeoutMs: 5_000, what: 'the first renewal' });
    // The next renewal grants 1 s, ending when the lease already ended: Vault's answer at the max TTL.
    capped.vault.ttlSecs = 1;
    await waitFor(() => tokensSent(capped, 'renew-self').length === 2, { timeoutMs: 5_000, what: 'the second renewal' });
    // A bounded wait of more than the 1 s lease: no third renewal.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(tokensSent(capped, 'renew-self')).toHaveLength(2);
    expect(await renewals(metrics)).toEqual({ renewed: 1, not_extended: 1, failed: 0 });
    // Not a failure: the token's source must hold a new one before it expires, which is watched from its first use.
    expect(logs.records().filter((record) => record.level === 'warn')).toEqual([]);
  });

  it('a failed renewal is one warn line and a counted failure, with neither the token nor a control character of the answer', async () => {
    const fake = await vault();
    fake.vault.ttlSecs = 2;
    const { signer } = await loadAuthoritySigner(fake.uri, fake.env);
    const { logs, metrics } = observed(signer);
    await waitFor(() => tokensSent(fake, 'lookup-self').length === 1, { timeoutMs: 5_000, what: 'the lookup' });
    // The renewal at half the 2 s lease meets a 500 whose message holds control characters.
    fake.fault = 'garbled';
    await waitFor(() => logs.records().some((record) => record.level === 'warn'), { timeoutMs: 5_000, what: 'the warn line of the refused renewal' });
    const warned = logs.records().filter((record) => record.level === 'warn');
    expect(warned).toEqual([expect.objectContaining({ outcome: 'failed', reason: expect.stringContaining('renewal not tried again') })]);
    expect(String(warned[0]!.reason)).not.toMatch(/[\u0000-\u001f\u007f]/);
    expect(await renewals(metrics)).toEqual({ renewed: 0, not_extended: 0, failed: 1 });
    expect(leakedFragments(logs.text(), [VAULT_TOKEN])).toEqual([]);
  });

  it('a refused lookup (a policy without lookup-self) is a counted failure too: the token is then only used, never renewed', async () => {
    const asked: string[] = [];
    const call: VaultCall = async (_method, path) => {
      asked.push(path);
      throw new Error('Vault transit: permission denied');
    };
    const lease = new TokenLease(call, { current: () => VAULT_TOKEN });
    const { logs, metrics } = observed(lease);
    lease.watch();
    await waitFor(() => logs.records().length === 1, { timeoutMs: 5_000, what: 'the warn line of the refused lookup' });
    expect(asked).toEqual(['/v1/auth/token/lookup-self']);
    expect(logs.records()[0]).toMatchObject({ level: 'warn', outcome: 'failed', reason: expect.stringContaining('never renewed') });
    expect(await renewals(metrics)).toEqual({ renewed: 0, not_extended: 0, failed: 1 });
  });

  it.each([
    ['a line break', `${VAULT_TOKEN}\nX-Injected: 1`],
    ['a NUL', `${VAULT_TOKEN}\u0000tail`],
    ['an escape sequence', `\u001b[2J${VAULT_TOKEN}`],
  ])('holding %s, in VAULT_TOKEN or its file, is refused without being printed', async (_, token) => {
    const fake = await vault();
    const line = await problemOf(fake.uri, { VAULT_ADDR: fake.url, VAULT_TOKEN: token });
    expect(line).toBe(
      'BRIDGE_AUTHORITY_KEYPAIR: vault-transit URI: the Vault token in VAULT_TOKEN holds a line break, NUL, space or other character a token never has (not printed); write the token alone on one line',
    );
    const file = tempFiles().write('mounted', `${token}\n`);
    const fromFile = await problemOf(`${fake.uri}?token-source=file:${file}`, { VAULT_ADDR: fake.url });
    expect(fromFile).toContain(`the Vault token in token-source file ${JSON.stringify(file)} holds a line break`);
    expect(leakedFragments(`${line}\n${fromFile}`, [VAULT_TOKEN, token])).toEqual([]);
    expect(fake.requests).toEqual([]);
  });
});

describe('where the token goes', () => {
  it('never over plain http to another host than loopback', async () => {
    for (const address of ['http://vault.example:8200', 'http://10.0.0.5:8200']) {
      expect(await problemOf('vault-transit:transit/bridge-authority', { VAULT_ADDR: address, VAULT_TOKEN })).toBe(
        `BRIDGE_AUTHORITY_KEYPAIR: vault-transit URI: VAULT_ADDR ${address} would send the token in clear; use https:// (http only to a loopback address)`,
      );
    }
  });

  it('never on a redirect to another origin (a standby naming the active node): one line, no request there', async () => {
    const fake = await vault();
    const elsewhere = await vault();
    fake.fault = 'redirect';
    fake.redirectTo = elsewhere.url;
    const line = await problemOf(fake.uri, fake.env);
    expect(line).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: Vault transit: GET /v1/transit/keys/bridge-authority was redirected to ${elsewhere.url}, another origin than VAULT_ADDR's ${fake.url}; the token is never sent there: set VAULT_ADDR to the active node or a load balancer in front of the cluster`,
    );
    expect(elsewhere.requests).toEqual([]);
  });

  it('a redirect within the same origin is followed', async () => {
    const fake = await vault();
    fake.fault = 'redirect';
    fake.redirectTo = fake.url;
    const { signer } = await loadAuthoritySigner(fake.uri, fake.env);
    expect(await signer.sign(randomBytes(32))).toHaveLength(64);
  });

  it('over https, to a Vault whose certificate VAULT_CACERT or VAULT_CAPATH vouches for, and to no other', async () => {
    const tls = loopbackCertificate();
    cleanups.push(() => tls.remove());
    const fake = await vault({ tls });
    expect(fake.url.startsWith('https://127.0.0.1:')).toBe(true);
    const untrusted = await problemOf(fake.uri, fake.env);
    expect(untrusted).toMatch(
      new RegExp(
        `^BRIDGE_AUTHORITY_KEYPAIR: Vault transit: ${fake.url.replace(/\./g, '\\.')} presented a certificate this server refuses \\((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\\); set VAULT_CACERT to the PEM file of the CA`,
      ),
    );
    for (const anchors of [{ VAULT_CACERT: tls.certPath }, { VAULT_CAPATH: tls.dir }]) {
      const { signer } = await loadAuthoritySigner(fake.uri, { ...fake.env, ...anchors });
      expect(await signer.sign(randomBytes(32))).toHaveLength(64);
    }
  });

  it('VAULT_CACERT must hold a certificate no other account can change', async () => {
    const files = tempFiles();
    const notPem = files.write('ca.pem', 'not a certificate');
    expect(await problemOf('vault-transit:transit/bridge-authority', { VAULT_ADDR: 'https://127.0.0.1:9', VAULT_TOKEN, VAULT_CACERT: notPem })).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: vault-transit URI: VAULT_CACERT file ${JSON.stringify(notPem)} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
    const tls = loopbackCertificate();
    cleanups.push(() => tls.remove());
    const shared = files.write('shared-ca.pem', tls.cert, 0o666);
    expect(await problemOf('vault-transit:transit/bridge-authority', { VAULT_ADDR: 'https://127.0.0.1:9', VAULT_TOKEN, VAULT_CACERT: shared })).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: vault-transit URI: VAULT_CACERT file ${JSON.stringify(shared)} is writable by its group and others (mode 0666); restrict it with chmod 600`,
    );
  });
});

describe("Vault's answers", () => {
  it('a key Vault does not hold is one line saying how to create it, not a bare 404', async () => {
    const fake = await vault();
    expect(await problemOf('vault-transit:transit/no-such-key', fake.env)).toBe(
      'BRIDGE_AUTHORITY_KEYPAIR: Vault transit: GET /v1/transit/keys/no-such-key answered 404; no key no-such-key under mount transit (or no transit engine mounted there): create it with `vault write -f transit/keys/no-such-key type=ed25519`, or fix the URI',
    );
  });

  it('control characters in what Vault (or a proxy) answers are escaped, never printed', async () => {
    const fake = await vault();
    fake.fault = 'garbled';
    const line = await problemOf(fake.uri, fake.env);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(line).toContain('sealed\\u001b[2J\\u0000');
  });
});
