import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium, driven by playwright-core (no browser download). The flags keep it off the
 * network it would otherwise reach for at every start (updates, sync, background fetches), which
 * this machine refuses. `.ci/run` installs the package.
 */

export const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const chromiumInstalled = existsSync(CHROMIUM);

/** A headless Chromium; `extraArgs` adds flags such as `--host-resolver-rules`. */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs], timeout: 20_000 });
}
