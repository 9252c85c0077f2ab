import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { unexpectedHostReason } from '../../src/http/allowed-hosts.js';
import { crossSiteReason } from '../../src/http/cross-site.js';
import { rawRequest, startTestApp, type TestApp } from '../support/http-app.js';
import { CHROMIUM, chromiumInstalled, launchChromium } from '../support/chromium.js';

/**
 * DNS rebinding and cross-site requests, driven by headless Chromium. `--host-resolver-rules`
 * maps evil.example to 127.0.0.1: a page loaded from http://evil.example:PORT/ is what a
 * rebinding attacker gets once their name points at the server, so its requests are
 * same-origin for the browser and only the Host header tells them apart. The app runs without
 * auth, the configuration where rebinding mattered (a page has no credentials otherwise).
 */

interface Answer {
  status: number;
  body: string;
}

/** What a script on `page` gets back from this path on its own origin. */
function fetchFromPage(page: Page, method: string, path: string): Promise<Answer> {
  return page.evaluate(
    async ([method, path]) => {
      const res = await fetch(path, { method });
      return { status: res.status, body: await res.text() };
    },
    [method, path] as const,
  );
}

describe.runIf(process.env.CI !== undefined)('Chromium in CI', () => {
  it('is installed (.ci/run installs the chromium package)', () => {
    expect(chromiumInstalled, `${CHROMIUM} is missing: CI must drive the rebinding and CSRF attacks in a browser`).toBe(true);
  });
});

describe.runIf(chromiumInstalled)('in Chromium', () => {
  let browser: Browser;
  let app: TestApp | undefined;
  let attacker: Server | undefined;

  beforeAll(async () => {
    browser = await launchChromium(['--host-resolver-rules=MAP evil.example 127.0.0.1, MAP bridge.example 127.0.0.1']);
  });
  afterAll(async () => {
    await browser.close();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await new Promise((resolve) => (attacker === undefined ? resolve(undefined) : attacker.close(resolve)));
    attacker = undefined;
  });

  it('a rebound page on evil.example reads no admin data and cannot POST /kill; public endpoints still answer it', async () => {
    app = await startTestApp();
    const context = await browser.newContext();
    const page = await context.newPage();
    expect((await page.goto(`http://evil.example:${app.port}/health`))?.status()).toBe(200);
    for (const [method, path] of [
      ['GET', '/transfers'],
      ['GET', '/crank/activity'],
      ['GET', '/crank/ui'],
      ['POST', '/kill'],
      ['POST', '/crank/poll'],
    ] as const) {
      const answer = await fetchFromPage(page, method, path);
      expect(answer.status, `${method} ${path}`).toBe(421);
      expect(JSON.parse(answer.body)).toEqual({
        error: 'misdirected_request',
        message: unexpectedHostReason(`evil.example:${app.port}`, { bindHost: '127.0.0.1', allowedHosts: [] }),
      });
    }
    expect(app.kills()).toBe(0);
    expect((await fetchFromPage(page, 'GET', '/metrics')).status).toBe(200);
    expect(app.logs.records()).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'admin request refused: unexpected Host', url: '/kill' }),
    );
    await context.close();
  });

  it('the same page opened by a name in BRIDGE_ALLOWED_HOSTS, or on loopback, works', async () => {
    app = await startTestApp({ allowedHosts: ['bridge.example'] });
    const context = await browser.newContext();
    const page = await context.newPage();
    for (const origin of [`http://bridge.example:${app.port}`, `http://127.0.0.1:${app.port}`, `http://localhost:${app.port}`]) {
      expect((await page.goto(`${origin}/crank/ui`))?.status(), origin).toBe(200);
      expect((await fetchFromPage(page, 'GET', '/crank/activity')).status, origin).toBe(200);
    }
    expect((await fetchFromPage(page, 'POST', '/kill')).status).toBe(202);
    expect(app.kills()).toBe(1);
    await context.close();
  });

  it('a form and a fetch from another site (CSRF) do not reach POST /kill', async () => {
    app = await startTestApp();
    const target = `http://127.0.0.1:${app.port}`;
    attacker = createServer((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end(
        `<form id="f" method="POST" action="${target}/kill" enctype="text/plain"><input name="x" value="y"></form>` +
          `<script>fetch('${target}/crank/poll', { method: 'POST', mode: 'no-cors' }).finally(() => document.getElementById('f').submit());</script>`,
      );
    });
    await new Promise<void>((resolve) => attacker!.listen(0, '127.0.0.1', resolve));
    const attackerPort = (attacker.address() as AddressInfo).port;
    const context = await browser.newContext();
    const page = await context.newPage();
    const formAnswer = page.waitForResponse((response) => response.url() === `${target}/kill`, { timeout: 10_000 });
    await page.goto(`http://evil.example:${attackerPort}/`);
    expect((await formAnswer).status()).toBe(403);
    expect(app.kills()).toBe(0);
    const refusals = app.logs.records().filter((record) => record['msg'] === 'admin request refused: cross-site');
    expect(refusals.map((record) => record['url']).sort()).toEqual(['/crank/poll', '/kill']);
    await context.close();
  });
});

describe('Host and Origin checks without a browser', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('admin routes refuse an unexpected Host before auth; public routes answer it', async () => {
    app = await startTestApp({ auth: { username: 'operator', password: 'rebinding-password' } });
    for (const path of ['/transfers', '/crank/ui', '/kill']) {
      const res = await rawRequest(app.port, { method: path === '/kill' ? 'POST' : 'GET', path, headers: { host: 'evil.example' } });
      expect(res.status, path).toBe(421);
      expect(res.headers['www-authenticate']).toBeUndefined();
    }
    expect((await rawRequest(app.port, { method: 'GET', path: '/health', headers: { host: 'evil.example' } })).status).toBe(200);
    expect(app.kills()).toBe(0);
  });

  it('expects localhost, loopback forms, the bind address, any address with a wildcard bind, and BRIDGE_ALLOWED_HOSTS', () => {
    const policy = { bindHost: '10.1.2.3', allowedHosts: ['bridge.example.com'] };
    for (const host of [
      'localhost',
      'LOCALHOST:8080',
      'localhost.',
      'ui.localhost:1',
      '127.0.0.1:8080',
      '127.9.9.9',
      '0x7f.1',
      '[::1]:8080',
      '[::ffff:127.0.0.1]',
      '10.1.2.3:8080',
      'Bridge.Example.com:443',
    ]) {
      expect(unexpectedHostReason(host, policy), host).toBeUndefined();
    }
    for (const host of [
      'evil.example',
      'evil.example:8080',
      '10.1.2.4',
      '[2001:db8::1]',
      'bridge.example.com.evil.example',
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      'a b',
    ]) {
      expect(unexpectedHostReason(host, policy), host).toMatch(/^Host ".*" is not a name this server answers admin requests for/);
    }
    expect(unexpectedHostReason('10.9.9.9:8080', { bindHost: '0.0.0.0', allowedHosts: [] })).toBeUndefined();
    expect(unexpectedHostReason('[2001:db8::1]:8080', { bindHost: '::', allowedHosts: [] })).toBeUndefined();
    expect(unexpectedHostReason('bridge.internal', { bindHost: '0.0.0.0', allowedHosts: [] })).toBeDefined();
    expect(unexpectedHostReason(undefined, policy)).toBeUndefined();
  });

  it('compares the Origin scheme with the one the request came over (X-Forwarded-Proto from a TLS ingress)', () => {
    expect(crossSiteReason({ host: 'bridge.internal', origin: 'http://bridge.internal' })).toBeUndefined();
    expect(crossSiteReason({ host: 'bridge.internal', origin: 'https://bridge.internal' })).toBe(
      'Origin https://bridge.internal is not this server (the request came over http)',
    );
    expect(crossSiteReason({ host: 'bridge.internal', origin: 'https://bridge.internal', 'x-forwarded-proto': 'https' })).toBeUndefined();
    expect(crossSiteReason({ host: 'bridge.internal', origin: 'http://bridge.internal', 'x-forwarded-proto': 'https' })).toBe(
      'Origin http://bridge.internal is not this server (the request came over https)',
    );
  });
});
