import { describe, expect, it } from 'vitest';
import { MAX_FOREIGN_TEXT_CHARS, boundText, escapeUnsafeCharacters } from '../src/text.js';

describe('boundText', () => {
  it('keeps short clean text as it is', () => {
    expect(boundText('Node is behind by 42 slots')).toBe('Node is behind by 42 slots');
  });

  it('cuts at 256 characters and counts what it left out', () => {
    const text = 'x'.repeat(1_000);
    expect(boundText(text)).toBe(`${'x'.repeat(MAX_FOREIGN_TEXT_CHARS)}… (744 more)`);
  });

  it('counts a 1 MB message exactly while examining only a few KiB of it', () => {
    const bounded = boundText('y'.repeat(1_048_576));
    expect(bounded).toBe(`${'y'.repeat(256)}… (${1_048_576 - 256} more)`);
  });

  it('takes its cap as an argument', () => {
    expect(boundText('abcdef', 3)).toBe('abc… (3 more)');
  });

  it('replaces control characters, line separators and bidi overrides with a space per run', () => {
    const forged = 'ok\n{"level":"info","msg":"forged"}\r\u001b[31mred\u0000\u2028\u202eevil\u2066x';
    expect(boundText(forged)).toBe('ok {"level":"info","msg":"forged"} [31mred evil x');
  });

  it('redacts URLs to their origin: an echoed API key in a path or query never survives', () => {
    const echoed = 'error calling https://user:pw@rpc.example.com:8443/v2/SECRET-KEY?api-key=SECRET2#frag and ws://127.0.0.1:8900/ws/SECRET3';
    const bounded = boundText(echoed);
    expect(bounded).toBe('error calling https://rpc.example.com:8443 and ws://127.0.0.1:8900');
    expect(bounded).not.toMatch(/SECRET|user|pw/);
  });

  it('keeps the punctuation that closes a sentence around a URL', () => {
    expect(boundText('(last: HTTP 500 from http://127.0.0.1:8899/KEY), then https://rpc.example.com.')).toBe(
      '(last: HTTP 500 from http://127.0.0.1:8899), then https://rpc.example.com.',
    );
  });

  it('redacts a URL that straddles the cut before cutting, so no part of its path is kept', () => {
    const text = `${'a'.repeat(250)} https://rpc.example.com/${'k'.repeat(2_000)}`;
    const bounded = boundText(text);
    expect(bounded).not.toContain('k');
    expect(bounded.startsWith(`${'a'.repeat(250)} https`)).toBe(true);
  });

  it('never splits a surrogate pair at the cut', () => {
    const text = `${'a'.repeat(255)}😀tail`;
    expect(boundText(text)).toBe(`${'a'.repeat(255)}… (6 more)`);
  });
});

describe('escapeUnsafeCharacters', () => {
  it('escapes C0 (but the line feed), C1, DEL, line separators and bidi controls as \\uXXXX, keeping everything else', () => {
    expect(escapeUnsafeCharacters('a\u001b[2Jb\u009b31m\u202e\u2066c\u2028d\u007f\ne\tf é ✓')).toBe(
      'a\\u001b[2Jb\\u009b31m\\u202e\\u2066c\\u2028d\\u007f\ne\\u0009f é ✓',
    );
  });

  it('keeps JSON valid and its value unchanged', () => {
    const value = { text: 'x\u0085\u202d\u2029y' };
    expect(JSON.parse(escapeUnsafeCharacters(JSON.stringify(value)))).toEqual(value);
  });
});
