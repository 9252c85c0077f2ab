import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AnyStateNode } from 'xstate';
import { crankMachine } from '../../src/machines/crank-machine.js';
import type { CrankService } from '../../src/machines/crank-service.js';
import { waitFor } from '../support/wait-for.js';
import { bridgeView, deposits } from '../machines/support/bridge-view.js';
import { startTestCrank } from '../machines/support/test-crank.js';
import { fails, rpcError } from '../machines/support/scripted-chains.js';
import { basicAuth, startTestApp, type TestApp } from '../support/http-app.js';
import { CHROMIUM, chromiumInstalled, launchChromium } from '../support/chromium.js';

/**
 * GET /crank/ui in headless Chromium (Debian's `chromium`, driven by playwright-core): the
 * page draws every state of the machine, follows the real crank (startCrank over scripted
 * chains whose submission the test holds) through a POST /crank/once, and works behind Basic
 * auth with the browser's credentials and nothing loaded from outside the server.
 */

const CREDENTIALS = { username: 'operator', password: 'p\u00e4ss w0rd' };
const PAGE_TIMEOUT_MS = 10_000;

/** Every state id of the machine definition, root excluded. */
function machineStateIds(node: AnyStateNode = crankMachine.root): string[] {
  return Object.values(node.states).flatMap((child) => [child.id, ...machineStateIds(child)]);
}

function activeStates(page: Page): Promise<string[]> {
  return page.$$eval('#chart .state.active', (elements) => elements.map((element) => element.getAttribute('data-state-id') ?? ''));
}

async function waitForActive(page: Page, expected: string[]): Promise<void> {
  await expect.poll(async () => (await activeStates(page)).sort(), { timeout: PAGE_TIMEOUT_MS, interval: 50 }).toEqual([...expected].sort());
}

async function waitUntilIdle(crank: CrankService): Promise<void> {
  await waitFor(() => crank.activity.snapshot().state.join() === 'crank.idle', { timeoutMs: 5_000, what: 'the crank to be idle' });
}

describe('GET /crank/ui without a browser', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('serves the page, its assets and its data only with admin credentials, and lets the page load nothing from elsewhere', async () => {
    const { crank } = startTestCrank(bridgeView({ deposits: [], withdrawals: [] }), { pollIntervalMs: 600_000 });
    app = await startTestApp({ crank, auth: CREDENTIALS });
    const authorization = basicAuth(CREDENTIALS.username, CREDENTIALS.password);
    for (const path of ['/crank/ui', '/crank/ui/assets/crank-ui.js', '/crank/machine', '/crank/activity']) {
      expect((await fetch(`${app.url}${path}`)).status, path).toBe(401);
      expect((await fetch(`${app.url}${path}`, { headers: { authorization } })).status, path).toBe(200);
    }
    const page = await fetch(`${app.url}/crank/ui`, { headers: { authorization } });
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    const machine = (await (await fetch(`${app.url}/crank/machine`, { headers: { authorization } })).json()) as { transitions: unknown[] };
    expect(machine.transitions.length).toBeGreaterThan(20);
    await crank.stop(1000);
  });

  it('answers 405 for another method on the page, and an empty activity while the crank is disabled', async () => {
    app = await startTestApp();
    const res = await fetch(`${app.url}/crank/ui`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(await (await fetch(`${app.url}/crank/activity`)).json()).toEqual({ state: [], cycles: [], actions: [] });
  });
});

describe.runIf(process.env.CI !== undefined)('Chromium in CI', () => {
  it('is installed (.ci/run installs the chromium package)', () => {
    expect(chromiumInstalled, `${CHROMIUM} is missing: CI must drive GET /crank/ui in a browser`).toBe(true);
  });
});

describe.runIf(chromiumInstalled)('GET /crank/ui in headless Chromium', () => {
  let browser: Browser;
  let app: TestApp | undefined;
  let crank: CrankService | undefined;

  beforeAll(async () => {
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser.close();
  });
  afterEach(async () => {
    await crank?.stop(1000);
    await app?.close();
    app = undefined;
  });

  it('draws every state of the machine and follows the crank through POST /crank/once, behind Basic auth', async () => {
    const started = startTestCrank(bridgeView({ deposits: deposits(3), withdrawals: [] }), { pollIntervalMs: 600_000 });
    crank = started.crank;
    await waitUntilIdle(crank);
    const held = started.chains.hold();
    started.chains.script('ackDeposits', held.reply);
    app = await startTestApp({ crank, auth: CREDENTIALS });

    // Without credentials the 401 challenge cannot be answered: headless Chromium gives up on it.
    const refused = await browser.newContext();
    await expect((await refused.newPage()).goto(`${app.url}/crank/ui`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
    await refused.close();

    const context = await browser.newContext({ httpCredentials: CREDENTIALS, viewport: { width: 1300, height: 900 } });
    const page = await context.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    // Content-Security-Policy violations show up here.
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });

    expect((await page.goto(`${app.url}/crank/ui`))?.status()).toBe(200);
    await page.waitForSelector('#chart[data-drawn="true"]', { timeout: PAGE_TIMEOUT_MS });
    const drawn = await page.$$eval('#chart [data-state-id]', (elements) => elements.map((element) => element.getAttribute('data-state-id')));
    expect([...drawn].sort()).toEqual(machineStateIds().sort());
    expect(await page.locator('#chart .edge').count()).toBeGreaterThan(20);

    await waitForActive(page, ['crank.idle']);
    expect(await page.locator('#cycles tbody tr').count()).toBe(1);
    expect(await page.locator('#role').textContent()).toBe('active: this server signs');

    const authorization = basicAuth(CREDENTIALS.username, CREDENTIALS.password);
    const report = fetch(`${app.url}/crank/once`, { method: 'POST', headers: { authorization } });
    await held.started;
    await waitForActive(page, ['crank.ack_deposit', 'crank.ack_deposit.submitting']);
    expect(await page.locator('#current-state').textContent()).toBe('ack_deposit.submitting');
    if (process.env.CRANK_UI_SCREENSHOT !== undefined) await page.screenshot({ path: process.env.CRANK_UI_SCREENSHOT, fullPage: true });

    held.release();
    expect((await report).status).toBe(200);
    await waitForActive(page, ['crank.idle']);
    await expect.poll(() => page.locator('#cycles tbody tr').count(), { timeout: PAGE_TIMEOUT_MS, interval: 50 }).toBe(2);
    const firstAction = await page.locator('#actions tbody tr').first().textContent();
    expect(firstAction).toContain('ack_deposit');
    expect(firstAction).toContain('landed');
    expect(firstAction).toContain('0..2 (3)');

    expect(await page.locator('#status').textContent()).toMatch(/^updated \d\d:\d\d:\d\d UTC$/);
    expect(errors).toEqual([]);
    expect(requested.length).toBeGreaterThan(3);
    for (const url of requested) expect(url.startsWith(`${app.url}/`), url).toBe(true);
    expect(await activeStates(page)).toEqual(['crank.idle']);
    await context.close();
  }, 60_000);

  it("shows /health's status and last_error in its header, and marks a standby's cycles as read-only ones", async () => {
    const started = startTestCrank(bridgeView({ deposits: deposits(100), withdrawals: [] }), { pollIntervalMs: 600_000, handoffMs: 3_600_000 });
    crank = started.crank;
    await waitUntilIdle(crank);
    app = await startTestApp({ crank, auth: CREDENTIALS });
    const context = await browser.newContext({ httpCredentials: CREDENTIALS });
    const page = await context.newPage();
    expect((await page.goto(`${app.url}/crank/ui`))?.status()).toBe(200);
    await expect.poll(() => page.locator('#health-status').textContent(), { timeout: PAGE_TIMEOUT_MS, interval: 50 }).toBe('ok');
    expect(await page.locator('#cycles tbody tr').first().textContent()).toContain('standby (read only)');
    expect(await page.locator('#role').textContent()).toMatch(/^standby: /);
    // No watchdog over scripted chains (they offer no BridgeWatch): /health has no crank.watchdog.
    await expect.poll(() => page.locator('#watchdog').textContent(), { timeout: PAGE_TIMEOUT_MS, interval: 50 }).toBe('off');

    started.chains.script('readState', fails(rpcError(true)));
    await crank.runOnce();
    expect(crank.status()).toBe('degraded');
    const lastError = crank.health().last_error ?? '';
    expect(lastError).toMatch(/reading the trackers failed/);
    await expect.poll(() => page.locator('#health-status').textContent(), { timeout: PAGE_TIMEOUT_MS, interval: 50 }).toBe('degraded');
    expect(await page.locator('#health-status').getAttribute('class')).toBe('degraded');
    expect(await page.locator('#last-error').textContent()).toBe(lastError);
    await context.close();
  }, 30_000);

  it('works when the credentials are in the URL: the page fetches from the origin and the browser adds them', async () => {
    app = await startTestApp({ auth: CREDENTIALS });
    const context = await browser.newContext();
    const page = await context.newPage();
    const user = `${encodeURIComponent(CREDENTIALS.username)}:${encodeURIComponent(CREDENTIALS.password)}`;
    expect((await page.goto(`http://${user}@127.0.0.1:${app.port}/crank/ui`))?.status()).toBe(200);
    await page.waitForSelector('#chart[data-drawn="true"]', { timeout: PAGE_TIMEOUT_MS });
    await expect.poll(() => page.locator('#status').textContent(), { timeout: PAGE_TIMEOUT_MS, interval: 50 }).toMatch(/^updated /);
    expect(await page.locator('#current-state').textContent()).toBe('crank disabled');
    expect(await page.locator('#health-status').textContent()).toBe('ok');
    expect(await activeStates(page)).toEqual([]);
    await context.close();
  }, 30_000);
});
