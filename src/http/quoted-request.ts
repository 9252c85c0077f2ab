import { boundText } from '../text.js';

/**
 * What log lines and error messages quote of a request: anyone can send a 16 KB URL or header,
 * and unauthenticated requests are logged, so each quote is cut to a fixed length and what was
 * cut is counted in it ("… (N more)", src/text.ts). A line per request stays under about
 * MAX_QUOTED_URL_CHARS + 2 x MAX_QUOTED_HEADER_CHARS characters of request text, whatever the request.
 */

/** The longest request URL (path and query) a log line quotes. */
export const MAX_QUOTED_URL_CHARS = 512;
/** The longest header value (Host, Origin, Sec-Fetch-Site) a log line or an error message quotes. */
export const MAX_QUOTED_HEADER_CHARS = 128;

export function quotedUrl(url: string): string {
  return boundText(url, MAX_QUOTED_URL_CHARS);
}

export function quotedHeader(value: string): string {
  return boundText(value, MAX_QUOTED_HEADER_CHARS);
}
