/**
 * Text that comes from outside (an RPC node's error message, a transaction error, data quoted
 * back) before it reaches /health, a log line or a report: URLs cut to their origin (a provider
 * that echoes the request URL would otherwise publish its API key), control and bidi-override
 * characters replaced by spaces (no forged log lines, no terminal escapes, no reordered text),
 * and the length capped, with what was left out counted.
 */

/** The default cap for one piece of foreign text. */
export const MAX_FOREIGN_TEXT_CHARS = 256;

// Never examine more than this many times the cap: a 1 MB message costs a few KiB of work.
const EXAMINED_PER_KEPT = 4;
// Scheme, then everything up to whitespace or a quote; new URL() decides what the origin is.
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;
// C0 and C1 controls, DEL, line and paragraph separators, bidi embeddings, overrides and isolates.
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g;

/**
 * `text` made safe to quote: URLs redacted to their origin, unsafe characters replaced, at most
 * `maxChars` characters kept and the rest counted as "… (N more)".
 */
export function boundText(text: string, maxChars: number = MAX_FOREIGN_TEXT_CHARS): string {
  const examined = text.slice(0, maxChars * EXAMINED_PER_KEPT);
  const clean = examined.replace(URL_PATTERN, urlOrigin).replace(UNSAFE_CHARACTERS, ' ');
  const left = text.length - examined.length;
  if (clean.length <= maxChars && left === 0) return clean;
  const kept = cutAt(clean, maxChars);
  return `${kept}… (${clean.length - kept.length + left} more)`;
}

function urlOrigin(match: string): string {
  // Punctuation that closes the sentence around a URL, as in "(from https://host:8899)".
  const trailing = /[).,;:\]]+$/.exec(match)?.[0] ?? '';
  const url = match.slice(0, match.length - trailing.length);
  if (!URL.canParse(url)) return `[url]${trailing}`;
  const { origin, protocol, host } = new URL(url);
  // Non-special schemes (ws is special, but e.g. "postgres:") report origin "null".
  return `${origin === 'null' ? `${protocol}//${host}` : origin}${trailing}`;
}

/**
 * `text` safe to write to a terminal, nothing cut: every character of UNSAFE_CHARACTERS but the
 * line feed becomes its `\uXXXX` escape, visible and, inside a JSON string, the same value. For
 * output whose layout (tables, indented JSON) needs line feeds.
 */
export function escapeUnsafeCharacters(text: string): string {
  return text.replace(UNSAFE_CHARACTERS, (run) =>
    [...run].map((character) => (character === '\n' ? character : `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)).join(''),
  );
}

/** The first `maxChars` characters, never splitting a surrogate pair. */
function cutAt(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const last = text.charCodeAt(maxChars - 1);
  const splitsPair = last >= 0xd800 && last <= 0xdbff;
  return text.slice(0, splitsPair ? maxChars - 1 : maxChars);
}
