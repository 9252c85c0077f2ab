import { readBoundedBody } from '../chain/rpc/bounded-body.js';
import { describeError } from '../errors.js';
import { boundText } from '../text.js';
import type { Part } from './escalate.js';

/**
 * `ops escalate --health URL`: this authority's /health, for the escalation document. The URL
 * is the operator's, but the answer is not trusted:
 * - the body is read while it streams and refused past MAX_HEALTH_BYTES, never buffered whole;
 * - the whole fetch, body included, ends within HEALTH_TIMEOUT_MS;
 * - a redirect is not followed: the document names the origin the answer came from, and a 3xx
 *   is reported with its target's origin;
 * - the URL is shown by its origin only: `user:password@` (sent as a Basic Authorization header,
 *   since fetch refuses a URL with credentials), the path and the query may hold secrets;
 * - error text is bounded and cleaned (src/text.ts).
 */

/** How long `--health` may take: the whole fetch, body included. */
export const HEALTH_TIMEOUT_MS = 5_000;
/** The /health body is read up to this many bytes. */
export const MAX_HEALTH_BYTES = 64 * 1024;

export type HealthPart = Part<unknown> & { origin: string | null };

export async function fetchHealth(url: string | undefined): Promise<HealthPart> {
  if (url === undefined) return { origin: null, value: null, error: 'not fetched: pass --health http://host:port/health' };
  if (!URL.canParse(url)) return { origin: null, value: null, error: '--health is not a URL' };
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return { origin: null, value: null, error: '--health is not an http(s) URL' };
  const { origin } = target;
  const headers = basicAuthorization(target);
  target.username = '';
  target.password = '';
  try {
    const response = await fetch(target, { headers, redirect: 'manual', signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      return { origin, value: null, error: `HTTP ${response.status} from ${origin}: a redirect${redirectTarget(response, target)}, not followed` };
    }
    const body = await readBoundedBody(response, MAX_HEALTH_BYTES);
    if (body.kind === 'too_large')
      return { origin, value: null, error: `the answer from ${origin} is over ${MAX_HEALTH_BYTES} bytes; refused after ${body.receivedBytes}` };
    if (!response.ok) return { origin, value: null, error: `HTTP ${response.status} from ${origin}` };
    return { origin, value: JSON.parse(body.text) as unknown, error: null };
  } catch (err) {
    return { origin, value: null, error: `GET ${origin} failed within ${HEALTH_TIMEOUT_MS} ms: ${boundText(describeError(err))}` };
  }
}

function basicAuthorization(url: URL): Record<string, string> {
  if (url.username === '' && url.password === '') return {};
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return { authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}` };
}

function redirectTarget(response: Response, base: URL): string {
  const location = response.headers.get('location');
  if (location === null || !URL.canParse(location, base.href)) return '';
  return ` to ${new URL(location, base).origin}`;
}
