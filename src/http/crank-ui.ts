import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { CrankService } from '../machines/crank-service.js';

/**
 * GET /crank/ui: a page that draws the crank machine from its definition (GET /crank/machine)
 * and highlights the current state and lists recent cycles and actions (GET /crank/activity,
 * polled by the page every second). Registered in the admin scope: the same Basic auth covers
 * the page, its assets and its data. Every asset ships with the package (`ui/crank/`, next to
 * `dist/`), and the page's Content-Security-Policy lets it load nothing from anywhere else.
 *
 * Polling, not a stream: Cloud Run serves one request at a time (containerConcurrency 1), and an
 * open stream would hold that one slot away from probes and admin calls. Each poll is one small
 * answer, bounded by CRANK_CYCLE_HISTORY and CRANK_ACTION_HISTORY (src/machines/crank-activity.ts).
 */

const UI_DIR = packagedUiDir(fileURLToPath(import.meta.url));
const ASSETS_PREFIX = '/crank/ui/assets/';
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * `ui/crank/` of the package this module runs from: the nearest ancestor that has it. This code
 * runs from src/http/ (tests), from dist/index.js (the bundled server,
 * scripts/bundle-server.mjs) or from a chunk in dist/chunks/, each a different depth below the
 * package root. Without ui/ the server still starts, as it always did: the page answers 404 and
 * @fastify/static logs one warn line naming the path it expected (beside dist/).
 */
function packagedUiDir(modulePath: string): string {
  const candidates = [1, 2, 3].map((up) => join(ancestor(modulePath, up), 'ui', 'crank'));
  return candidates.find((candidate) => existsSync(join(candidate, 'index.html'))) ?? candidates[1]!;
}

function ancestor(path: string, levels: number): string {
  return levels === 0 ? path : ancestor(dirname(path), levels - 1);
}

/** What the page polls: logged at debug level like probes, not once a second at info. */
export const CRANK_UI_POLLED_PATHS: ReadonlySet<string> = new Set(['/crank/activity', `${ASSETS_PREFIX}*`]);

export async function registerCrankUi(admin: FastifyInstance, crank: CrankService): Promise<void> {
  await admin.register(fastifyStatic, {
    root: UI_DIR,
    prefix: ASSETS_PREFIX,
    index: false,
    setHeaders: (res) => res.setHeader('content-security-policy', CONTENT_SECURITY_POLICY),
  });

  admin.get('/crank/ui', (_request, reply) => reply.header('content-security-policy', CONTENT_SECURITY_POLICY).sendFile('index.html'));

  // Loaded at the first request: the machine's module brings xstate and the chain client's bounds, which a start without runtime configuration does not need.
  admin.get('/crank/machine', async () => (await import('../machines/export.js')).crankMachineGraph());

  admin.get('/crank/activity', async () => {
    const role = crank.role();
    const lease = role === null ? undefined : crank.health().lease;
    return { ...crank.activity.snapshot(), ...(role === null ? {} : { role }), ...(lease === undefined ? {} : { lease }) };
  });
}
