import { Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.js';
import { serializeError } from '../../src/log/logger.js';
import { captureLogs } from '../support/log-capture.js';
import { checkLogLine, duplicateKeyIn, takeLogLineProblems, typeProblemsIn } from '../support/log-lines.js';

/** Renderings a secret key could take in a JSON line: a number list or an object of indices. */
function secretRenderings(keypair: Keypair): string[] {
  const secret = Array.from(keypair.secretKey);
  return [secret.slice(0, 6).join(','), `"0":${secret[0]},"1":${secret[1]}`, Buffer.from(keypair.secretKey).toString('base64').slice(0, 12)];
}

describe('createLogger', () => {
  it('writes one JSON line per call: level label, Cloud Logging severity, ISO time, object then message', () => {
    const logs = captureLogs('info');
    logs.logger.warn({ action: 'ack_deposit', attempt: 2 }, 'action failed');
    logs.logger.debug('below the level');
    const records = logs.records();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ level: 'warn', severity: 'WARNING', action: 'ack_deposit', attempt: 2, msg: 'action failed' });
    expect(new Date(String(records[0]?.time)).toISOString()).toBe(records[0]?.time);
  });

  it('censors authorization headers, passwords and secret keys by path', () => {
    const logs = captureLogs();
    logs.logger.info({
      req: { headers: { authorization: 'Basic b3BzOmh1bnRlcjI=', host: 'x' } },
      auth: { username: 'ops', password: 'hunter2' },
      password: 'hunter3',
      signer: { secretKey: 'base58secret' },
    });
    const text = logs.text();
    for (const secret of ['b3BzOmh1bnRlcjI=', 'hunter2', 'hunter3', 'base58secret']) expect(text).not.toContain(secret);
    expect(logs.records()[0]).toMatchObject({
      req: { headers: { authorization: '[redacted]', host: 'x' } },
      auth: { username: 'ops', password: '[redacted]' },
    });
  });

  it("never writes a Keypair's secret, however deep it sits, and keeps public keys readable", () => {
    const keypair = Keypair.generate();
    const logs = captureLogs();
    logs.logger.info({ options: { chains: { authority: keypair, list: [keypair] } }, authority: keypair.publicKey }, 'wired');
    logs.logger.child({ signer: keypair, nested: { deeper: { signer: keypair } } }).info('child bindings');
    const [first, second] = logs.records();
    expect(first).toMatchObject({
      options: { chains: { authority: '[redacted keypair]', list: ['[redacted keypair]'] } },
      authority: keypair.publicKey.toBase58(),
    });
    expect(second).toMatchObject({ signer: '[redacted keypair]', nested: { deeper: { signer: '[redacted keypair]' } } });
    logs.logger.child({ component: 'crank' }).child({ grandchild: keypair }).info('grandchild');
    expect(logs.records()[2]).toMatchObject({ component: 'crank', grandchild: '[redacted keypair]' });
    for (const rendering of secretRenderings(keypair)) expect(logs.text()).not.toContain(rendering);
  });

  it('writes raw bytes as their length only', () => {
    const logs = captureLogs();
    logs.logger.info({ seed: new Uint8Array(32).fill(7), data: Buffer.from('secret-bytes') });
    expect(logs.records()[0]).toMatchObject({ seed: '[redacted 32 bytes]', data: '[redacted 12 bytes]' });
    expect(logs.text()).not.toContain('7,7,7');
  });

  it('serializes errors with code, context and cause (a stack only where it is not a BridgeError), without a keypair attached anywhere', () => {
    const keypair = Keypair.generate();
    const cause = Object.assign(new Error('socket hang up'), { signer: keypair });
    const err = new BridgeError(
      'CHAIN__RPC_FAILED',
      { chain: 'source', method: 'getAccountInfo', kind: 'network' },
      { what: 'source getAccountInfo', reason: 'socket hang up' },
      {
        cause,
      },
    );
    const logs = captureLogs();
    logs.logger.error({ err, action: 'read' }, 'read failed');
    logs.logger.error({ failure: Object.assign(new Error('other key'), { keypair }) }, 'error under another key');
    const text = logs.text();
    for (const rendering of secretRenderings(keypair)) expect(text).not.toContain(rendering);
    const [first, second] = logs.records();
    expect(first?.err).toMatchObject({
      type: 'BridgeError',
      code: 'CHAIN__RPC_FAILED',
      context: { chain: 'source', method: 'getAccountInfo', kind: 'network' },
      message: expect.stringContaining('source getAccountInfo failed'),
    });
    // Its message says what failed and what to do: no kilobyte of bundle chunk names on every transient failure.
    expect(first?.err).not.toHaveProperty('stack');
    expect(text).toContain('socket hang up');
    expect(second?.failure).toMatchObject({ type: 'Error', message: 'other key', keypair: '[redacted]' });
  });

  it('writes `err` as an object whatever was given: an error keeps its stack on an error line only, text becomes { message }', () => {
    const logs = captureLogs();
    logs.logger.error({ err: new TypeError('a bug') }, 'unexpected');
    logs.logger.warn({ err: 'attempt 1 of 3 failed: HTTP 500' }, 'text');
    logs.logger.warn({ err: 42 }, 'a number');
    logs.logger.warn({ err: Object.assign(new Error('Method not found'), { code: -32601 }) }, 'a JSON-RPC error');
    logs.logger.warn({ err: new Error('HTTP 500 from the node'), chain: 'target' }, 'a transient failure, retried');
    const [bug, text, number, jsonRpc, transient] = logs.records();
    expect(jsonRpc?.err).toMatchObject({ code: '-32601', message: 'Method not found' });
    // Below `error` a stack is a kilobyte of bundle chunk names at every transient failure: left out.
    expect(transient).toMatchObject({ chain: 'target', err: { type: 'Error', message: 'HTTP 500 from the node' } });
    expect(transient?.err).not.toHaveProperty('stack');
    expect(bug?.err).toMatchObject({ type: 'TypeError', message: 'a bug', stack: expect.stringContaining('TypeError: a bug') });
    expect(text?.err).toEqual({ message: 'attempt 1 of 3 failed: HTTP 500' });
    expect(number?.err).toEqual({ message: '42' });
  });
});

describe('one type per key', () => {
  it("finds a key whose type differs from an earlier line's, at any depth, and `err` that is not an object", () => {
    expect(typeProblemsIn('{"probe_a":"text","probe_b":{"c":1}}')).toEqual([]);
    expect(typeProblemsIn('{"probe_a":{"x":1},"probe_b":{"c":"one"}}')).toEqual([
      expect.stringContaining('the key "probe_a" is of type object here, string in an earlier line'),
      expect.stringContaining('the key "probe_b.c" is of type string here, number in an earlier line'),
    ]);
    expect(typeProblemsIn('{"probe_a":null,"probe_b":{"c":null}}')).toEqual([]);
    expect(typeProblemsIn('{"err":"text"}')).toEqual([expect.stringContaining('the key "err" is always of type object, this line has string')]);
    expect(typeProblemsIn('{"probe_list":[1,2]}')).toEqual([]);
    expect(typeProblemsIn('{"probe_list":["x"]}')).toEqual([expect.stringContaining('the key "probe_list[]" is of type string here, number')]);
  });
});

describe('no key twice in a line', () => {
  it('leaves out a field the logger already binds with the same value, keeps a different one as <key>_here', () => {
    const logs = captureLogs();
    const chain = logs.logger.child({ component: 'chain' }).child({ chain: 'source' });
    chain.info({ chain: 'source', signature: 'sig' }, 'transaction landed');
    chain.warn({ chain: 'target', time: 5, level: 'x' }, 'another chain named');
    chain.child({ chain: 'source', lane: 'L' }).info('a grandchild binding the same chain');
    chain.child({ chain: 'target' }).info('a grandchild binding another chain');
    const lines = logs.text().trim().split('\n');
    for (const line of lines) expect(duplicateKeyIn(line), line).toBeNull();
    expect(logs.records()).toEqual([
      expect.objectContaining({ component: 'chain', chain: 'source', signature: 'sig', msg: 'transaction landed' }),
      expect.objectContaining({ chain: 'source', chain_here: 'target', time_here: 5, level_here: 'x', level: 'warn' }),
      expect.objectContaining({ chain: 'source', lane: 'L' }),
      expect.objectContaining({ chain: 'source', chain_here: 'target' }),
    ]);
  });

  it("the suite's check finds a key twice at any depth, and only then", () => {
    expect(duplicateKeyIn('{"component":"chain","chain":"source","chain":"source"}')).toBe('chain');
    expect(duplicateKeyIn('{"a":{"b":1,"c":{"d":[{"e":1,"e":2}]}}}')).toBe('e');
    expect(duplicateKeyIn('{"a":{"b":1},"b":{"a":1},"s":"\\"a\\":1,\\"a\\":2","l":[{"x":1},{"x":2}]}')).toBeNull();
    expect(duplicateKeyIn('not json {"a":1,"a":1}')).toBeNull();
    expect(takeLogLineProblems()).toEqual([]);
    captureLogs().logger.info({ 'a"b': 1 }, 'a key with a quote');
    expect(takeLogLineProblems()).toEqual([]);
    checkLogLine('{"component":"chain","chain":"source","chain":"source"}\n', 'a writer');
    expect(takeLogLineProblems()).toEqual([expect.stringContaining('a writer wrote the key "chain" twice in one object')]);
  });
});

describe('serializeError', () => {
  it('serializes an error with its cause chain and replaces a keypair attached to it', () => {
    const keypair = Keypair.generate();
    const nested = Object.assign(new Error('nested'), { signer: keypair, seed: keypair.secretKey.slice(0, 32) });
    const err = Object.assign(new Error('outer', { cause: Object.assign(new Error('inner'), { signer: keypair }) }), { nested });
    const serialized = serializeError(err) as Record<string, unknown>;
    expect(serialized).toMatchObject({ type: 'Error', message: expect.stringContaining('outer'), stack: expect.stringContaining('Error: outer') });
    const text = JSON.stringify(serialized);
    expect(text).toContain('inner');
    expect(serialized.nested).toMatchObject({ type: 'Error', message: 'nested', signer: '[redacted keypair]', seed: '[redacted 32 bytes]' });
    expect(text).not.toContain(Array.from(keypair.secretKey).slice(0, 6).join(','));
    expect(text).not.toContain('"0":');
  });
});
