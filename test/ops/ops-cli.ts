import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import bs58 from 'bs58';
import type { DevnetBridge } from '../integration/support/devnet-bridge.js';

/** `npm run ops` as operators run it: the built CLI spawned with the server's variables. */

const CLI = join(fileURLToPath(new URL('../..', import.meta.url)), 'dist', 'ops', 'cli.js');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function ops(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export function serverEnv(b: DevnetBridge, slot: number): Record<string, string> {
  return {
    BRIDGE_SOURCE_RPC_URL: b.pair.source.url,
    BRIDGE_TARGET_RPC_URL: b.pair.target.url,
    BRIDGE_SOURCE_CHAIN_ID: String(b.world.source.chainId),
    BRIDGE_TARGET_CHAIN_ID: String(b.world.target.chainId),
    BRIDGE_AUTHORITY_KEYPAIR: b.world.authorities[slot]!.keypairPath,
  };
}

/** Every textual form of the keypair file's secret half an output could leak. */
export function secretForms(path: string): string[] {
  const bytes = Uint8Array.from(JSON.parse(readFileSync(path, 'utf8')) as number[]);
  const secret = bytes.slice(0, 32);
  return [bs58.encode(bytes), bs58.encode(secret), Buffer.from(secret).toString('hex'), Buffer.from(bytes).toString('base64'), secret.join(',')];
}
