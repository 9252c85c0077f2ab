import fc from 'fast-check';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { LOG_LEVELS, READ_COMMITMENTS, defaultMinBalanceLamports, parseConfig, type Config, type ConfigVariable } from '../../src/config/config.js';
import { AUTH_VARIABLES, RUNTIME_VARIABLES } from '../../src/config/variable-sets.js';
import { DEFAULT_PROGRAM_ID } from '../../src/chain/codec/layout.js';
import { isBridgeError } from '../../src/errors.js';
import { checkProperty, propertyProfile } from '../support/profile.js';

/**
 * Configuration parsing (SPEC §2.1, §7): any valid environment parses to exactly the
 * configuration it describes, and any environment with one bad variable is refused with a
 * problem line that starts with that variable's name.
 */

const RUNS = propertyProfile() === 'long' ? 20_000 : 300;
const U32_MAX = 4_294_967_295;
const TIMER_MAX = 2_147_483_647;
const MAX_POLL_SECS = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

interface Case {
  env: Record<string, string>;
  config: Config;
}

/** A decimal as an operator may write it: leading zeros are allowed. */
const decimal = (min: number, max: number) =>
  fc.tuple(fc.integer({ min, max }), fc.nat(2)).map(([value, zeros]) => ({ value, text: `${'0'.repeat(zeros)}${value}` }));

const bind = fc.oneof(
  fc.constant({ env: {}, bind: { host: '0.0.0.0', port: 8080 } }),
  decimal(0, 65535).map(({ value, text }) => ({ env: { PORT: text }, bind: { host: '0.0.0.0', port: value } })),
  fc
    .record({
      // As written in the variable, and as listen() takes it.
      host: fc.constantFrom<[string, string]>(
        ['127.0.0.1', '127.0.0.1'],
        ['localhost', 'localhost'],
        ['bridge-1.internal', 'bridge-1.internal'],
        ['[::1]', '::1'],
        ['[2001:db8::5]', '2001:db8::5'],
      ),
      port: decimal(0, 65535),
      fallback: fc.option(decimal(0, 65535), { nil: undefined }),
    })
    .map(({ host: [written, host], port, fallback }) => ({
      env: { BRIDGE_BIND_ADDRESS: `${written}:${port.text}`, ...(fallback === undefined ? {} : { PORT: fallback.text }) },
      bind: { host, port: port.value },
    })),
);

const printable = (forbidden: RegExp) =>
  fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 20 })
    .filter((value) => !forbidden.test(value) && value.trim() === value && value.length > 0);

const auth = fc.option(fc.record({ username: printable(/[:\u0000-\u001f\u007f]/), password: printable(/[\u0000-\u001f\u007f]/) }), {
  nil: undefined,
});

const rpcUrl = fc
  .tuple(
    fc.constantFrom('http', 'https'),
    fc.constantFrom('127.0.0.1:8899', 'rpc.example.org', '[::1]:8999'),
    fc.constantFrom('', '/', '/v1?api-key=abc'),
  )
  .map(([scheme, host, path]) => new URL(`${scheme}://${host}${path}`).href);

const programId = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => bs58.encode(bytes));

/** An optional variable: absent (the default applies) or set. */
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

const crank = fc.option(
  fc.record({
    sourceRpcUrl: rpcUrl,
    targetRpcUrl: rpcUrl,
    sourceChainId: decimal(0, 65535),
    targetChainId: decimal(0, 65535),
    authorityKeypair: fc.stringMatching(/^\/secrets\/[a-z0-9-]{1,12}\.json$/),
    pollSecs: optional(decimal(0, MAX_POLL_SECS)),
    maxAttempts: optional(decimal(1, U32_MAX)),
    retryBackoffMs: optional(decimal(0, Number.MAX_SAFE_INTEGER)),
    sourceProgramId: optional(programId),
    targetProgramId: optional(programId),
    rpcTimeoutMs: optional(decimal(1, TIMER_MAX)),
    sourceReadCommitment: optional(fc.constantFrom(...READ_COMMITMENTS)),
    inspectUrl: optional(fc.constantFrom('ws://127.0.0.1:4242', 'wss://inspect.example.org/session').map((url) => new URL(url).href)),
  }),
  { nil: undefined },
);

const validCases: fc.Arbitrary<Case> = fc
  .record({ bind, auth, crank, logLevel: optional(fc.constantFrom(...LOG_LEVELS)), shutdown: optional(decimal(0, TIMER_MAX)) })
  .map(({ bind: where, auth: credentials, crank: runtime, logLevel, shutdown }) => {
    const env: Record<string, string> = { ...where.env };
    if (credentials !== undefined) Object.assign(env, { BRIDGE_AUTH_USERNAME: credentials.username, BRIDGE_AUTH_PASSWORD: credentials.password });
    if (logLevel !== undefined) env['BRIDGE_LOG_LEVEL'] = logLevel;
    if (shutdown !== undefined) env['BRIDGE_SHUTDOWN_TIMEOUT_MS'] = shutdown.text;
    if (runtime !== undefined) {
      Object.assign(env, {
        BRIDGE_SOURCE_RPC_URL: runtime.sourceRpcUrl,
        BRIDGE_TARGET_RPC_URL: runtime.targetRpcUrl,
        BRIDGE_SOURCE_CHAIN_ID: runtime.sourceChainId.text,
        BRIDGE_TARGET_CHAIN_ID: runtime.targetChainId.text,
        BRIDGE_AUTHORITY_KEYPAIR: runtime.authorityKeypair,
      });
      const optionalVariables: Array<[ConfigVariable, string | undefined]> = [
        ['BRIDGE_POLL_INTERVAL_SECS', runtime.pollSecs?.text],
        ['BRIDGE_CRANK_MAX_ATTEMPTS', runtime.maxAttempts?.text],
        ['BRIDGE_CRANK_RETRY_BACKOFF_MS', runtime.retryBackoffMs?.text],
        ['BRIDGE_SOURCE_PROGRAM_ID', runtime.sourceProgramId],
        ['BRIDGE_TARGET_PROGRAM_ID', runtime.targetProgramId],
        ['BRIDGE_RPC_TIMEOUT_MS', runtime.rpcTimeoutMs?.text],
        ['BRIDGE_SOURCE_READ_COMMITMENT', runtime.sourceReadCommitment],
        ['BRIDGE_XSTATE_INSPECT', runtime.inspectUrl],
      ];
      for (const [name, value] of optionalVariables) if (value !== undefined) env[name] = value;
    }
    const config: Config = {
      bind: where.bind,
      allowedHosts: [],
      maxConnectionsPerAddress: 32,
      adminAuth: credentials,
      logLevel: logLevel ?? 'info',
      shutdownTimeoutMs: shutdown?.value ?? 8000,
      crank: runtime && {
        sourceRpcUrl: runtime.sourceRpcUrl,
        targetRpcUrl: runtime.targetRpcUrl,
        sourceRpcFallbackUrls: [],
        targetRpcFallbackUrls: [],
        rpcMaxSlotLag: 128,
        sourceChainId: runtime.sourceChainId.value,
        targetChainId: runtime.targetChainId.value,
        authorityKeypair: runtime.authorityKeypair,
        sourceProgramId: runtime.sourceProgramId ?? DEFAULT_PROGRAM_ID,
        targetProgramId: runtime.targetProgramId ?? DEFAULT_PROGRAM_ID,
        pollIntervalMs: (runtime.pollSecs?.value ?? 15) * 1000,
        maxAttempts: runtime.maxAttempts?.value ?? 3,
        retryBackoffMs: runtime.retryBackoffMs?.value ?? 1000,
        rpcTimeoutMs: runtime.rpcTimeoutMs?.value ?? 10_000,
        sourceReadCommitment: runtime.sourceReadCommitment ?? 'finalized',
        inspectUrl: runtime.inspectUrl,
        minBalanceLamports: defaultMinBalanceLamports((runtime.pollSecs?.value ?? 15) * 1000, 100_000),
        onForeignSigner: 'continue',
        handoffMs: 300_000,
        dryRun: false,
        transferWaitAlertMs: 600_000,
        priorityFee: { minMicroLamports: 0, maxMicroLamports: 100_000 },
        nonceAccounts: 2,
        sendExtensions: { source: { sendUrls: [], tip: undefined }, target: { sendUrls: [], tip: undefined } },
        watchdog: { onInvariantBreach: 'continue', watchdogFile: undefined, programHashes: {}, flowLimits: [] },
      },
    };
    return { env, config };
  });

/** Values each variable must refuse (never empty: an empty value counts as unset). */
const integerJunk = ['-1', '1.5', '12abc', ' 12', '0x10', '1e3', '+1', 'twelve'];
/** Above a u16: the first value past the bound, or any larger one. */
const aboveU16 = fc.oneof(fc.constant('65536'), fc.integer({ min: 65_537, max: 1e9 }).map(String), fc.constantFrom(...integerJunk));
const INVALID: Partial<Record<ConfigVariable, fc.Arbitrary<string>>> = {
  BRIDGE_BIND_ADDRESS: fc.constantFrom('::1:8080', '[::1]', 'host', 'host:', ':8080', 'host:70000', '[not-ipv6]:80', 'a b:80'),
  PORT: aboveU16,
  BRIDGE_AUTH_USERNAME: fc.constantFrom('ops:admin', 'a\u0007b', ':'),
  BRIDGE_AUTH_PASSWORD: fc.constantFrom('pass\u0000word', '\u001b[31m'),
  BRIDGE_SOURCE_RPC_URL: fc.constantFrom('ftp://rpc.example.org', 'not a url', 'ws://127.0.0.1:8900', 'rpc.example.org'),
  BRIDGE_TARGET_RPC_URL: fc.constantFrom('file:///etc/passwd', 'http//missing-colon', 'wss://rpc.example.org'),
  BRIDGE_SOURCE_CHAIN_ID: aboveU16,
  BRIDGE_TARGET_CHAIN_ID: aboveU16,
  BRIDGE_POLL_INTERVAL_SECS: fc.constantFrom(...integerJunk, '18446744073709551616', String(MAX_POLL_SECS + 1)),
  BRIDGE_CRANK_MAX_ATTEMPTS: fc.constantFrom('0', '4294967296', ...integerJunk),
  BRIDGE_CRANK_RETRY_BACKOFF_MS: fc.constantFrom('9007199254740992', '18446744073709551616', ...integerJunk),
  BRIDGE_SOURCE_PROGRAM_ID: fc.constantFrom('not-base58!', '0OIl', bs58.encode(new Uint8Array(31).fill(1))),
  BRIDGE_TARGET_PROGRAM_ID: fc.constantFrom('BridgeProgram', bs58.encode(new Uint8Array(33).fill(7))),
  BRIDGE_RPC_TIMEOUT_MS: fc.constantFrom('0', '2147483648', ...integerJunk),
  BRIDGE_SOURCE_READ_COMMITMENT: fc.constantFrom('processed', 'Finalized', 'final', 'confirmed '),
  BRIDGE_LOG_LEVEL: fc.constantFrom('verbose', 'INFO', 'warning', 'debug '),
  BRIDGE_SHUTDOWN_TIMEOUT_MS: fc.constantFrom('2147483648', ...integerJunk),
  BRIDGE_XSTATE_INSPECT: fc.constantFrom('http://127.0.0.1:4242', 'not a url', '127.0.0.1:4242'),
};

const badVariable = fc.oneof(
  ...Object.entries(INVALID).map(([variable, value]) => fc.record({ variable: fc.constant(variable as ConfigVariable), value: value! })),
);

const invalidCases = fc.tuple(validCases, badVariable).map(([valid, { variable, value }]) => ({ env: spoil(valid.env, variable, value), variable }));

/** The valid environment with one variable set to a bad value (and its auth partner set, so only the value is wrong). */
function spoil(env: Record<string, string>, variable: ConfigVariable, value: string): Record<string, string> {
  const spoiled = { ...env, [variable]: value };
  const auth: readonly string[] = AUTH_VARIABLES;
  if (auth.includes(variable)) for (const name of AUTH_VARIABLES) spoiled[name] ??= 'valid';
  return spoiled;
}

function problemsOf(env: Record<string, string>): { message: string; problems: string[] } {
  try {
    parseConfig(env);
  } catch (err) {
    if (isBridgeError(err, 'CONFIG__INVALID')) return { message: err.message, problems: err.context.problems };
    throw err;
  }
  throw new Error(`parseConfig accepted ${JSON.stringify(env)}`);
}

describe('configuration parsing (pure properties)', () => {
  it('any valid environment parses to the configuration it describes, with no warning', async () => {
    await checkProperty(
      'config round trip',
      fc.asyncProperty(validCases, async ({ env, config }) => {
        expect(parseConfig(env)).toEqual({ config, warnings: [] });
      }),
      RUNS,
    );
  });

  it('any environment with one invalid variable is refused, naming that variable', async () => {
    await checkProperty(
      'config refusal',
      fc.asyncProperty(invalidCases, async ({ env, variable }) => {
        const { message, problems } = problemsOf(env);
        expect(problems).toContainEqual(expect.stringMatching(new RegExp(`^${variable}: `)));
        expect(message).toContain(variable);
      }),
      RUNS,
    );
  });

  it('a partial runtime set, or one auth variable alone, is refused naming each missing variable', async () => {
    const presence: ConfigVariable[] = [...RUNTIME_VARIABLES, ...AUTH_VARIABLES];
    const partial = fc
      .tuple(validCases, fc.subarray(presence, { minLength: 1 }))
      .filter(([valid, dropped]) => valid.config.crank !== undefined && valid.config.adminAuth !== undefined && dropped.length < 7)
      .map(([valid, dropped]) => ({
        env: Object.fromEntries(Object.entries(valid.env).filter(([name]) => !dropped.includes(name as ConfigVariable))),
        dropped,
      }));
    await checkProperty(
      'config partial sets',
      fc.asyncProperty(partial, async ({ env, dropped }) => {
        const runtimeLeft = RUNTIME_VARIABLES.some((name) => env[name] !== undefined);
        const authLeft = AUTH_VARIABLES.some((name) => env[name] !== undefined);
        const runtime: readonly string[] = RUNTIME_VARIABLES;
        const expectedMissing = dropped.filter((name) => (runtime.includes(name) ? runtimeLeft : authLeft));
        if (expectedMissing.length === 0) {
          expect(() => parseConfig(env)).not.toThrow();
          return;
        }
        const { problems } = problemsOf(env);
        for (const name of expectedMissing) expect(problems).toContainEqual(expect.stringMatching(new RegExp(`^${name}: missing; `)));
      }),
      RUNS,
    );
  });
});
