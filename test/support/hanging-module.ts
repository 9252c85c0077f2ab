import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * hanging-pkcs11.c built against a SoftHSM module: its C_Sign blocks while `hang()` is on. Built
 * with g++ as C: .ci/run installs g++ for pkcs11js (a native addon); without it this fails saying so.
 */

const SOURCE = fileURLToPath(new URL('./hanging-pkcs11.c', import.meta.url));
const BUILD_TIMEOUT_MS = 60_000;

export interface HangingModule {
  path: string;
  hang(): void;
  release(): void;
}

export function buildHangingModule(realModulePath: string, dir: string): HangingModule {
  const path = join(dir, 'libhanging-pkcs11.so');
  const hangFile = join(dir, 'hang');
  try {
    execFileSync(
      'g++',
      ['-x', 'c', '-shared', '-fPIC', '-O1', `-DREAL_MODULE="${realModulePath}"`, `-DHANG_FILE="${hangFile}"`, '-o', path, SOURCE, '-ldl'],
      { stdio: ['ignore', 'pipe', 'pipe'], timeout: BUILD_TIMEOUT_MS },
    );
  } catch (err) {
    throw new Error(`cannot build the hanging PKCS#11 module with g++: ${(err as { stderr?: Buffer }).stderr?.toString() ?? String(err)}`);
  }
  return {
    path,
    hang: () => writeFileSync(hangFile, ''),
    release: () => rmSync(hangFile, { force: true }),
  };
}
