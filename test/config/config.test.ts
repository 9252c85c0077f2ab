import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, DEFAULTS, parseConfig } from '../../src/config/config.js';
import { RUNTIME_VARIABLES } from '../../src/config/variable-sets.js';
import { BridgeError, isBridgeError } from '../../src/errors.js';

const RUNTIME = {
  BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:8899',
  BRIDGE_TARGET_RPC_URL: 'https://rpc.example.org/v1?api-key=abc',
  BRIDGE_SOURCE_CHAIN_ID: '1',
  BRIDGE_TARGET_CHAIN_ID: '2',
  BRIDGE_AUTHORITY_KEYPAIR: '/secrets/authority.json',
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (err) {
    if (isBridgeError(err, 'CONFIG__INVALID')) return err.context.problems;
    throw err;
  }
  throw new Error('expected parseConfig to throw CONFIG__INVALID');
}

describe('parseConfig: defaults', () => {
  it('starts with the crank disabled, no auth and 0.0.0.0:8080 when nothing is set', () => {
    const { config, warnings } = parseConfig({});
    expect(config).toEqual({
      bind: { host: '0.0.0.0', port: 8080 },
      allowedHosts: [],
      maxConnectionsPerAddress: 32,
      adminAuth: undefined,
      logLevel: 'info',
      shutdownTimeoutMs: 8000,
      crank: undefined,
    });
    expect(warnings).toEqual([]);
  });

  it('fills every crank default of SPEC §2.1 and the extensions, in milliseconds', () => {
    const { config } = parseConfig(RUNTIME);
    expect(config.crank).toEqual({
      sourceRpcUrl: 'http://127.0.0.1:8899/',
      targetRpcUrl: 'https://rpc.example.org/v1?api-key=abc',
      sourceRpcFallbackUrls: [],
      targetRpcFallbackUrls: [],
      rpcMaxSlotLag: 128,
      sourceChainId: 1,
      targetChainId: 2,
      authorityKeypair: '/secrets/authority.json',
      sourceProgramId: 'BridgeProgram111111111111111111111111111111',
      targetProgramId: 'BridgeProgram111111111111111111111111111111',
      pollIntervalMs: 15_000,
      maxAttempts: 3,
      retryBackoffMs: 1000,
      rpcTimeoutMs: 10_000,
      sourceReadCommitment: 'finalized',
      inspectUrl: undefined,
      minBalanceLamports: 144_000_000,
      onForeignSigner: 'continue',
      handoffMs: 300_000,
      dryRun: false,
      transferWaitAlertMs: 600_000,
      priorityFee: { minMicroLamports: 0, maxMicroLamports: 100_000 },
      nonceAccounts: 2,
      sendExtensions: { source: { sendUrls: [], tip: undefined }, target: { sendUrls: [], tip: undefined } },
      watchdog: { onInvariantBreach: 'continue', watchdogFile: undefined, programHashes: {}, flowLimits: [] },
    });
  });

  it('BRIDGE_*_SEND_URLS and the tips: validated like the RPC URLs, a tip with its accounts, within its own cap', () => {
    const tipAccount = 'Etc2sjrkpiUQAEgYv8EzRAyG51gMZ1LdnAuN2YZQg8D6';
    const another = '4ACfpUFoaSD9bfPdeu6DBt89gB6ENTeHBXCAi87NhDEE';
    const { config } = parseConfig({
      ...RUNTIME,
      BRIDGE_TARGET_SEND_URLS: 'http://127.0.0.1:9000, https://sender.example.org/fast',
      BRIDGE_TARGET_TIP_LAMPORTS: '1000',
      BRIDGE_TARGET_TIP_ACCOUNT: `${tipAccount}, ${another}`,
    });
    expect(config.crank!.sendExtensions).toEqual({
      source: { sendUrls: [], tip: undefined },
      target: { sendUrls: ['http://127.0.0.1:9000/', 'https://sender.example.org/fast'], tip: { accounts: [tipAccount, another], lamports: 1000 } },
    });
    expect(problemsOf({ ...RUNTIME, BRIDGE_SOURCE_SEND_URLS: 'http://127.0.0.1:9000,ftp://x' })).toEqual([
      'BRIDGE_SOURCE_SEND_URLS: entry 2: expected an http:// or https:// URL, got one with scheme "ftp:"',
    ]);
    expect(problemsOf({ ...RUNTIME, BRIDGE_SOURCE_TIP_LAMPORTS: '1000' })).toEqual([
      'BRIDGE_SOURCE_TIP_ACCOUNT: missing; BRIDGE_SOURCE_TIP_LAMPORTS is set, and a tip needs the accounts it is paid to',
    ]);
    expect(problemsOf({ ...RUNTIME, BRIDGE_TARGET_TIP_ACCOUNT: tipAccount })).toEqual([
      'BRIDGE_TARGET_TIP_LAMPORTS: missing; BRIDGE_TARGET_TIP_ACCOUNT is set, and names no tip without an amount above 0',
    ]);
    expect(problemsOf({ ...RUNTIME, BRIDGE_TARGET_TIP_LAMPORTS: '1000', BRIDGE_TARGET_TIP_ACCOUNT: `${tipAccount},nope,${tipAccount}` })).toEqual([
      'BRIDGE_TARGET_TIP_ACCOUNT: entry 2: expected a base58 32-byte public key, got "nope"',
      `BRIDGE_TARGET_TIP_ACCOUNT: entry 3: ${tipAccount} is listed twice`,
    ]);
    // The tip's own cap, 1,000,000 unless set; the priority fee cap no longer bounds it.
    const tipped = parseConfig({
      ...RUNTIME,
      BRIDGE_TARGET_TIP_LAMPORTS: '1000000',
      BRIDGE_TARGET_TIP_ACCOUNT: tipAccount,
      BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: '1',
    });
    expect(tipped.config.crank!.sendExtensions.target.tip).toEqual({ accounts: [tipAccount], lamports: 1_000_000 });
    expect(problemsOf({ ...RUNTIME, BRIDGE_TARGET_TIP_LAMPORTS: '1000001', BRIDGE_TARGET_TIP_ACCOUNT: tipAccount })).toEqual([
      'BRIDGE_TARGET_TIP_LAMPORTS: 1000001 is above BRIDGE_TARGET_TIP_MAX_LAMPORTS (1000000), the most a transaction of this chain pays in tip; lower the tip or raise BRIDGE_TARGET_TIP_MAX_LAMPORTS',
    ]);
    expect(
      problemsOf({
        ...RUNTIME,
        BRIDGE_SOURCE_TIP_LAMPORTS: '5000',
        BRIDGE_SOURCE_TIP_ACCOUNT: tipAccount,
        BRIDGE_SOURCE_TIP_MAX_LAMPORTS: '4999',
      })[0],
    ).toMatch(/^BRIDGE_SOURCE_TIP_LAMPORTS: 5000 is above BRIDGE_SOURCE_TIP_MAX_LAMPORTS \(4999\)/);
  });

  it('a day of fees by default includes the tip paid on top of each transaction', () => {
    const tipAccount = 'Etc2sjrkpiUQAEgYv8EzRAyG51gMZ1LdnAuN2YZQg8D6';
    const { config } = parseConfig({ ...RUNTIME, BRIDGE_TARGET_TIP_LAMPORTS: '5000', BRIDGE_TARGET_TIP_ACCOUNT: tipAccount });
    // 5,760 transactions a day at 15 s, each 5,000 + 20,000 + the tip of 5,000.
    expect(config.crank!.minBalanceLamports).toBe(5_760 * 30_000);
  });

  it('reads every optional variable when set', () => {
    const { config } = parseConfig({
      ...RUNTIME,
      BRIDGE_POLL_INTERVAL_SECS: '30',
      BRIDGE_CRANK_MAX_ATTEMPTS: '5',
      BRIDGE_CRANK_RETRY_BACKOFF_MS: '250',
      BRIDGE_SOURCE_PROGRAM_ID: '11111111111111111111111111111111',
      BRIDGE_TARGET_PROGRAM_ID: 'Etc2sjrkpiUQAEgYv8EzRAyG51gMZ1LdnAuN2YZQg8D6',
      BRIDGE_RPC_TIMEOUT_MS: '2500',
      BRIDGE_SOURCE_READ_COMMITMENT: 'confirmed',
      BRIDGE_LOG_LEVEL: 'debug',
      BRIDGE_SHUTDOWN_TIMEOUT_MS: '0',
      BRIDGE_XSTATE_INSPECT: 'wss://inspect.example.org/session',
      BRIDGE_MIN_BALANCE_LAMPORTS: '9007199254740991',
      BRIDGE_ON_FOREIGN_SIGNER: 'halt',
      BRIDGE_HANDOFF_SECS: '31536000',
      BRIDGE_DRY_RUN: 'true',
      BRIDGE_TRANSFER_WAIT_ALERT_SECS: '1800',
      BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS: '1000',
      BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: '1000000000',
      BRIDGE_NONCE_ACCOUNTS: '8',
    });
    expect(config.logLevel).toBe('debug');
    expect(config.shutdownTimeoutMs).toBe(0);
    expect(config.crank).toMatchObject({
      pollIntervalMs: 30_000,
      maxAttempts: 5,
      retryBackoffMs: 250,
      sourceProgramId: '11111111111111111111111111111111',
      targetProgramId: 'Etc2sjrkpiUQAEgYv8EzRAyG51gMZ1LdnAuN2YZQg8D6',
      rpcTimeoutMs: 2500,
      sourceReadCommitment: 'confirmed',
      inspectUrl: 'wss://inspect.example.org/session',
      minBalanceLamports: 9007199254740991,
      onForeignSigner: 'halt',
      handoffMs: 31_536_000_000,
      dryRun: true,
      transferWaitAlertMs: 1_800_000,
      priorityFee: { minMicroLamports: 1000, maxMicroLamports: 1_000_000_000 },
      nonceAccounts: 8,
    });
  });

  it('BRIDGE_NONCE_ACCOUNTS: 2 per chain by default, 0 for blockhash mode, at most 8', () => {
    const nonceAccounts = (value?: string) =>
      parseConfig({ ...RUNTIME, ...(value === undefined ? {} : { BRIDGE_NONCE_ACCOUNTS: value }) }).config.crank?.nonceAccounts;
    expect(nonceAccounts()).toBe(2);
    expect(nonceAccounts('0')).toBe(0);
    expect(() => nonceAccounts('9')).toThrow('BRIDGE_NONCE_ACCOUNTS');
  });

  it('refuses a priority fee floor above its cap, or a price past 10^9 micro-lamports per CU', () => {
    expect(() => parseConfig({ ...RUNTIME, BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS: '200000' })).toThrow(
      'BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS: 200000 is above BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS (100000)',
    );
    expect(() => parseConfig({ ...RUNTIME, BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: '1000000001' })).toThrow('BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS');
    expect(() => parseConfig({ ...RUNTIME, BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: '-1' })).toThrow('BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS');
  });

  it('defaults BRIDGE_MIN_BALANCE_LAMPORTS to a day of one-transaction cycles per chain at the poll interval, each bidding the cap', () => {
    const minBalance = (env: Record<string, string>) => parseConfig({ ...RUNTIME, ...env }).config.crank?.minBalanceLamports;
    // 5000 per signature + 100,000 micro-lamports x 200,000 CU (one instruction's default reservation).
    expect(minBalance({})).toBe((86_400 / 15) * (5000 + 20_000));
    expect(minBalance({ BRIDGE_POLL_INTERVAL_SECS: '60' })).toBe(1440 * (5000 + 20_000));
    expect(minBalance({ BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: '0' })).toBe(5760 * 5000);
    // A zero interval still runs about one cycle per second.
    expect(minBalance({ BRIDGE_POLL_INTERVAL_SECS: '0' })).toBe(86_400 * (5000 + 20_000));
    expect(minBalance({ BRIDGE_MIN_BALANCE_LAMPORTS: '0' })).toBe(0);
  });

  it('treats an empty value as unset', () => {
    const { config } = parseConfig({ BRIDGE_SOURCE_RPC_URL: '', BRIDGE_AUTH_USERNAME: '', PORT: '', BRIDGE_LOG_LEVEL: '' });
    expect(config.crank).toBeUndefined();
    expect(config.adminAuth).toBeUndefined();
    expect(config.bind.port).toBe(8080);
    expect(config.logLevel).toBe('info');
  });

  it('keeps DEFAULTS in the schema order and names only variables it reads', () => {
    for (const name of Object.keys(DEFAULTS)) expect(CONFIG_VARIABLES).toContain(name);
  });
});

describe('parseConfig: bind address', () => {
  it.each([
    [{}, '0.0.0.0', 8080],
    [{ PORT: '9090' }, '0.0.0.0', 9090],
    [{ BRIDGE_BIND_ADDRESS: '127.0.0.1:0' }, '127.0.0.1', 0],
    [{ BRIDGE_BIND_ADDRESS: 'localhost:8081' }, 'localhost', 8081],
    [{ BRIDGE_BIND_ADDRESS: '[::1]:8082' }, '::1', 8082],
    [{ BRIDGE_BIND_ADDRESS: '[::]:8083', PORT: '9999' }, '::', 8083],
    [{ BRIDGE_BIND_ADDRESS: '[fe80::1%eth0]:80' }, 'fe80::1%eth0', 80],
  ])('%j binds %s port %i', (env, host, port) => {
    expect(parseConfig(env).config.bind).toEqual({ host, port });
  });

  it.each([
    '::1:8080',
    '[::1]',
    '[::1]8080',
    'host',
    'host:',
    ':8080',
    'host:70000',
    'host:12abc',
    'host:-1',
    '[not-ipv6]:80',
    'a b:80',
    'host:80:80',
  ])('refuses BRIDGE_BIND_ADDRESS=%s', (value) => {
    expect(problemsOf({ BRIDGE_BIND_ADDRESS: value })).toEqual([
      `BRIDGE_BIND_ADDRESS: expected host:port or [ipv6]:port with a port 0..65535, got ${JSON.stringify(value)}`,
    ]);
  });

  it('refuses a PORT that is not a u16', () => {
    expect(problemsOf({ PORT: '80a' })).toEqual(['PORT: expected an integer 0..65535, got "80a"']);
  });
});

describe('parseConfig: runtime variables (all five or none)', () => {
  it('names every missing variable and the ones that are set', () => {
    const set = 'BRIDGE_SOURCE_RPC_URL, BRIDGE_TARGET_CHAIN_ID';
    const all = RUNTIME_VARIABLES.join(', ');
    expect(problemsOf({ BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:1', BRIDGE_TARGET_CHAIN_ID: '2' })).toEqual([
      `BRIDGE_TARGET_RPC_URL: missing; the crank needs all of ${all} once any is set (set: ${set})`,
      `BRIDGE_SOURCE_CHAIN_ID: missing; the crank needs all of ${all} once any is set (set: ${set})`,
      `BRIDGE_AUTHORITY_KEYPAIR: missing; the crank needs all of ${all} once any is set (set: ${set})`,
    ]);
  });

  it.each(RUNTIME_VARIABLES)('a set without %s is a startup error naming it', (missing) => {
    const env: Record<string, string> = { ...RUNTIME };
    delete env[missing];
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${missing}: missing; `));
  });

  it('tuning variables without runtime configuration are still validated', () => {
    expect(problemsOf({ BRIDGE_CRANK_MAX_ATTEMPTS: '0' })).toHaveLength(1);
  });
});

describe('parseConfig: admin auth', () => {
  const both =
    'BRIDGE_AUTH_USERNAME and BRIDGE_AUTH_PASSWORD must be set together (both to protect the admin endpoints, neither to rely on ingress restriction)';

  it('takes both', () => {
    expect(parseConfig({ BRIDGE_AUTH_USERNAME: 'ops', BRIDGE_AUTH_PASSWORD: 'pa:ss wörd' }).config.adminAuth).toEqual({
      username: 'ops',
      password: 'pa:ss wörd',
    });
  });

  it('refuses a username alone, naming both variables', () => {
    expect(problemsOf({ BRIDGE_AUTH_USERNAME: 'ops' })).toEqual([`BRIDGE_AUTH_PASSWORD: missing; ${both}`]);
  });

  it('refuses a password alone, naming both variables, without echoing it', () => {
    const problems = problemsOf({ BRIDGE_AUTH_PASSWORD: 'hunter2-secret' });
    expect(problems).toEqual([`BRIDGE_AUTH_USERNAME: missing; ${both}`]);
    expect(problems.join('\n')).not.toContain('hunter2-secret');
  });

  it('refuses a user name with a colon and control characters, never echoing the password', () => {
    const problems = problemsOf({ BRIDGE_AUTH_USERNAME: 'a:b', BRIDGE_AUTH_PASSWORD: 'x\u0007secret-value' });
    expect(problems).toEqual([
      'BRIDGE_AUTH_USERNAME: must not contain ":" (HTTP Basic auth cannot carry it in a user name)',
      'BRIDGE_AUTH_PASSWORD: must not contain control characters',
    ]);
    expect(problems.join('\n')).not.toContain('secret-value');
  });
});

describe('parseConfig: integers are parsed strictly', () => {
  it.each(['70000', '65536', '-1', '1.5', '12abc', ' 12', '12 ', '0x10', '1e3', '+1', '١٢'])('BRIDGE_SOURCE_CHAIN_ID=%j is refused', (value) => {
    expect(problemsOf({ ...RUNTIME, BRIDGE_SOURCE_CHAIN_ID: value })).toEqual([
      `BRIDGE_SOURCE_CHAIN_ID: expected an integer 0..65535, got ${JSON.stringify(value)}`,
    ]);
  });

  it.each([
    ['0', 0],
    ['65535', 65535],
    ['007', 7],
  ])('BRIDGE_TARGET_CHAIN_ID=%s is %i', (value, chainId) => {
    expect(parseConfig({ ...RUNTIME, BRIDGE_TARGET_CHAIN_ID: value }).config.crank?.targetChainId).toBe(chainId);
  });

  it.each(['0', '-1', '4294967296', '2.5', 'three'])('BRIDGE_CRANK_MAX_ATTEMPTS=%s is refused', (value) => {
    expect(problemsOf({ ...RUNTIME, BRIDGE_CRANK_MAX_ATTEMPTS: value })).toEqual([
      `BRIDGE_CRANK_MAX_ATTEMPTS: expected an integer 1..4294967295 (at least one attempt), got ${JSON.stringify(value)}`,
    ]);
  });

  it('accepts BRIDGE_CRANK_MAX_ATTEMPTS from 1 to u32 max', () => {
    expect(parseConfig({ ...RUNTIME, BRIDGE_CRANK_MAX_ATTEMPTS: '1' }).config.crank?.maxAttempts).toBe(1);
    expect(parseConfig({ ...RUNTIME, BRIDGE_CRANK_MAX_ATTEMPTS: '4294967295' }).config.crank?.maxAttempts).toBe(4294967295);
  });
});

describe('parseConfig: u64 durations beyond 2^53', () => {
  it('keeps the largest supported poll interval exact, in milliseconds', () => {
    const { config } = parseConfig({ ...RUNTIME, BRIDGE_POLL_INTERVAL_SECS: '9007199254740' });
    expect(config.crank?.pollIntervalMs).toBe(9_007_199_254_740_000);
  });

  it('refuses a u64 poll interval whose milliseconds would lose precision', () => {
    expect(problemsOf({ ...RUNTIME, BRIDGE_POLL_INTERVAL_SECS: '18446744073709551615' })).toEqual([
      'BRIDGE_POLL_INTERVAL_SECS: 18446744073709551615 seconds is above the supported maximum of 9007199254740 seconds (about 285,000 years)',
    ]);
    expect(problemsOf({ ...RUNTIME, BRIDGE_POLL_INTERVAL_SECS: '9007199254741' })).toHaveLength(1);
  });

  it('refuses a value beyond u64 as not a u64', () => {
    expect(problemsOf({ ...RUNTIME, BRIDGE_POLL_INTERVAL_SECS: '18446744073709551616' })).toEqual([
      'BRIDGE_POLL_INTERVAL_SECS: expected an unsigned 64-bit integer, got "18446744073709551616"',
    ]);
  });

  it('takes backoff milliseconds up to Number.MAX_SAFE_INTEGER exactly', () => {
    expect(parseConfig({ ...RUNTIME, BRIDGE_CRANK_RETRY_BACKOFF_MS: '9007199254740991' }).config.crank?.retryBackoffMs).toBe(Number.MAX_SAFE_INTEGER);
    expect(problemsOf({ ...RUNTIME, BRIDGE_CRANK_RETRY_BACKOFF_MS: '9007199254740992' })).toEqual([
      'BRIDGE_CRANK_RETRY_BACKOFF_MS: 9007199254740992 milliseconds is above the supported maximum of 9007199254740991 milliseconds (about 285,000 years)',
    ]);
  });

  it('refuses a fractional or negative poll interval', () => {
    expect(problemsOf({ ...RUNTIME, BRIDGE_POLL_INTERVAL_SECS: '1.5' })).toEqual([
      'BRIDGE_POLL_INTERVAL_SECS: expected an unsigned 64-bit integer, got "1.5"',
    ]);
    expect(problemsOf({ ...RUNTIME, BRIDGE_POLL_INTERVAL_SECS: '-15' })).toHaveLength(1);
  });
});

describe('parseConfig: fallback RPC endpoints', () => {
  it('defaults to no fallback and a slot lag of 128', () => {
    expect(parseConfig(RUNTIME).config.crank).toMatchObject({ sourceRpcFallbackUrls: [], targetRpcFallbackUrls: [], rpcMaxSlotLag: 128 });
  });

  it('reads comma-separated lists (spaces trimmed) and the slot lag', () => {
    const { config } = parseConfig({
      ...RUNTIME,
      BRIDGE_SOURCE_RPC_FALLBACK_URLS: 'http://127.0.0.1:8901, https://rpc.example.org/v1?api-key=abc',
      BRIDGE_TARGET_RPC_FALLBACK_URLS: 'http://127.0.0.1:8902',
      BRIDGE_RPC_MAX_SLOT_LAG: '200',
    });
    expect(config.crank).toMatchObject({
      sourceRpcFallbackUrls: ['http://127.0.0.1:8901/', 'https://rpc.example.org/v1?api-key=abc'],
      targetRpcFallbackUrls: ['http://127.0.0.1:8902/'],
      rpcMaxSlotLag: 200,
    });
  });

  it('names the variable and the position of a bad entry, never its value', () => {
    const problems = problemsOf({
      ...RUNTIME,
      BRIDGE_SOURCE_RPC_FALLBACK_URLS: 'http://127.0.0.1:8901,ftp://rpc.example.org/?api-key=secret-key-1',
      BRIDGE_TARGET_RPC_FALLBACK_URLS: 'http://127.0.0.1:8902,,secret-key-2',
      BRIDGE_RPC_MAX_SLOT_LAG: '0',
    });
    expect(problems).toEqual([
      'BRIDGE_SOURCE_RPC_FALLBACK_URLS: entry 2: expected an http:// or https:// URL, got one with scheme "ftp:"',
      'BRIDGE_TARGET_RPC_FALLBACK_URLS: entry 2: expected an http:// or https:// URL, got a value that does not parse as a URL',
      'BRIDGE_TARGET_RPC_FALLBACK_URLS: entry 3: expected an http:// or https:// URL, got a value that does not parse as a URL',
      'BRIDGE_RPC_MAX_SLOT_LAG: expected an integer 1..2147483647, got "0"',
    ]);
    expect(problems.join('\n')).not.toMatch(/secret-key/);
  });
});

describe('parseConfig: other values', () => {
  it('refuses RPC URLs that are not http(s), without echoing them', () => {
    const problems = problemsOf({
      ...RUNTIME,
      BRIDGE_SOURCE_RPC_URL: 'not a url secret-key-123',
      BRIDGE_TARGET_RPC_URL: 'ftp://rpc.example.org/?api-key=secret-key-456',
    });
    expect(problems).toEqual([
      'BRIDGE_SOURCE_RPC_URL: expected an http:// or https:// URL, got a value that does not parse as a URL',
      'BRIDGE_TARGET_RPC_URL: expected an http:// or https:// URL, got one with scheme "ftp:"',
    ]);
    expect(problems.join('\n')).not.toMatch(/secret-key/);
  });

  it('reads BRIDGE_ALLOWED_HOSTS lower-cased and bounds BRIDGE_MAX_CONNECTIONS_PER_ADDRESS by the 256 connections in all', () => {
    const { config } = parseConfig({ BRIDGE_ALLOWED_HOSTS: 'Bridge.Example.com, ops.internal', BRIDGE_MAX_CONNECTIONS_PER_ADDRESS: '256' });
    expect(config).toMatchObject({ allowedHosts: ['bridge.example.com', 'ops.internal'], maxConnectionsPerAddress: 256 });
    expect(
      problemsOf({ BRIDGE_ALLOWED_HOSTS: 'ok.example,https://bridge.example.com,host:8080', BRIDGE_MAX_CONNECTIONS_PER_ADDRESS: '257' }),
    ).toEqual([
      'BRIDGE_ALLOWED_HOSTS: entry 2: expected a host name such as bridge.example.com (no scheme, no port), got "https://bridge.example.com"',
      'BRIDGE_ALLOWED_HOSTS: entry 3: expected a host name such as bridge.example.com (no scheme, no port), got "host:8080"',
      'BRIDGE_MAX_CONNECTIONS_PER_ADDRESS: expected an integer 1..256, got "257"',
    ]);
  });

  it('refuses RPC URLs with user:password@ at start, naming the variable and entry, never the secret', () => {
    const problems = problemsOf({
      ...RUNTIME,
      BRIDGE_SOURCE_RPC_URL: 'https://user:secret-pass-1@rpc.example.org/',
      BRIDGE_TARGET_RPC_URL: 'https://secret-token-2@rpc.example.org/',
      BRIDGE_SOURCE_RPC_FALLBACK_URLS: 'http://127.0.0.1:8901,https://user:secret-pass-3@rpc.example.org/',
    });
    const why =
      'the URL carries credentials (user:password@host), which the RPC client cannot send; use the key in the path or query as your provider documents, or an authenticating proxy';
    expect(problems).toEqual([`BRIDGE_SOURCE_RPC_URL: ${why}`, `BRIDGE_TARGET_RPC_URL: ${why}`, `BRIDGE_SOURCE_RPC_FALLBACK_URLS: entry 2: ${why}`]);
    expect(problems.join('\n')).not.toMatch(/secret-/);
  });

  it.each([
    ['BRIDGE_SOURCE_PROGRAM_ID', 'BridgeProgram', 'expected a base58 32-byte public key, got "BridgeProgram"'],
    ['BRIDGE_TARGET_PROGRAM_ID', '0OIl', 'expected a base58 32-byte public key, got "0OIl"'],
    ['BRIDGE_LOG_LEVEL', 'verbose', 'expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"'],
    ['BRIDGE_SOURCE_READ_COMMITMENT', 'processed', 'expected one of finalized, confirmed, got "processed"'],
    ['BRIDGE_RPC_TIMEOUT_MS', '0', 'expected an integer 1..2147483647, got "0"'],
    ['BRIDGE_SHUTDOWN_TIMEOUT_MS', '2147483648', 'expected an integer 0..2147483647, got "2147483648"'],
    ['BRIDGE_XSTATE_INSPECT', 'http://127.0.0.1:8080/session/TOKEN', 'expected a ws:// or wss:// URL, got one with scheme "http:"'],
    ['BRIDGE_XSTATE_INSPECT', 'not a url TOKEN', 'expected a ws:// or wss:// URL, got a value that does not parse as a URL'],
    ['BRIDGE_MIN_BALANCE_LAMPORTS', '9007199254740992', 'expected an integer 0..9007199254740991, got "9007199254740992"'],
    ['BRIDGE_MIN_BALANCE_LAMPORTS', '0.5', 'expected an integer 0..9007199254740991, got "0.5"'],
    ['BRIDGE_ON_FOREIGN_SIGNER', 'stop', 'expected one of continue, halt, got "stop"'],
    ['BRIDGE_DRY_RUN', 'yes', 'expected one of true, false, got "yes"'],
    ['BRIDGE_REQUIRE_CRANK', '1', 'expected one of true, false, got "1"'],
    ['BRIDGE_DRY_RUN', '1', 'expected one of true, false, got "1"'],
    ['BRIDGE_DRY_RUN', 'TRUE', 'expected one of true, false, got "TRUE"'],
    ['BRIDGE_TRANSFER_WAIT_ALERT_SECS', '10m', 'expected an unsigned 64-bit integer, got "10m"'],
  ])('%s=%s: %s', (name, value, message) => {
    expect(problemsOf({ ...RUNTIME, [name]: value })).toEqual([`${name}: ${message}`]);
  });

  it('reports every problem at once, one line each, in documentation order', () => {
    const problems = problemsOf({
      BRIDGE_LOG_LEVEL: 'loud',
      BRIDGE_SOURCE_CHAIN_ID: '70000',
      BRIDGE_AUTH_USERNAME: 'ops',
      PORT: 'http',
    });
    expect(problems.map((line) => line.slice(0, line.indexOf(':')))).toEqual([
      'PORT',
      'BRIDGE_AUTH_PASSWORD',
      'BRIDGE_SOURCE_RPC_URL',
      'BRIDGE_TARGET_RPC_URL',
      'BRIDGE_SOURCE_CHAIN_ID',
      'BRIDGE_TARGET_CHAIN_ID',
      'BRIDGE_AUTHORITY_KEYPAIR',
      'BRIDGE_LOG_LEVEL',
    ]);
    expect(problems).toContain('BRIDGE_SOURCE_CHAIN_ID: expected an integer 0..65535, got "70000"');
    for (const line of problems) expect(line).not.toContain('\n');
  });

  it('throws a BridgeError whose message carries every problem', () => {
    let thrown: unknown;
    try {
      parseConfig({ PORT: 'x', BRIDGE_LOG_LEVEL: 'y' });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(BridgeError);
    expect((thrown as BridgeError).message).toBe(
      'invalid configuration: PORT: expected an integer 0..65535, got "x"; BRIDGE_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "y"',
    );
  });

  it('shortens a long echoed value', () => {
    const [problem] = problemsOf({ PORT: '9'.repeat(200) });
    expect(problem).toBe(`PORT: expected an integer 0..65535, got "${'9'.repeat(80)}..."`);
  });
});

describe('parseConfig: warnings', () => {
  it('names BRIDGE_* variables it does not read, so that a typo does not silently keep a default', () => {
    const { warnings } = parseConfig({ BRIDGE_POLL_INTERVAL_SEC: '5', BRIDGE_AUTH_USER: 'ops', HOME: '/root' });
    expect(warnings).toEqual([
      'BRIDGE_AUTH_USER: not a variable this server reads (misspelt?); it is ignored',
      'BRIDGE_POLL_INTERVAL_SEC: not a variable this server reads (misspelt?); it is ignored',
    ]);
  });
});
