import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import { BridgeError } from '../errors.js';
import { redactSecrets } from './redact.js';

/**
 * The one logger factory: pino JSON lines on stdout, object first and message second
 * (`log.error({ err, action: 'ack_deposit' }, 'action failed')`). Secrets are kept out twice:
 * the paths below are censored by name, and every logged object goes through `redactSecrets`,
 * which replaces keypairs and raw bytes wherever they sit, in log calls and child bindings alike.
 */

export type Logger = PinoLogger;
export type LogLevel = pino.LevelWithSilent;

/** Censored wherever they appear at these paths, whatever their value. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.headers.authorization',
  'authorization',
  '*.authorization',
  'password',
  '*.password',
  '*.*.password',
  'secretKey',
  '*.secretKey',
  '*.*.secretKey',
  '*.*.*.secretKey',
  'keypair',
  '*.keypair',
  '*.*.keypair',
];

// Cloud Logging reads `severity`; without it every line of a JSON log counts as DEFAULT.
const SEVERITY: Record<string, string> = {
  trace: 'DEBUG',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARNING',
  error: 'ERROR',
  fatal: 'CRITICAL',
};

export interface LoggerOptions {
  level: LogLevel;
  /** Where lines go; synchronous stdout by default so nothing is lost on process.exit. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  const logger = pino(
    {
      level: options.level,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
      formatters: {
        level: (label) => ({ level: label, severity: SEVERITY[label] ?? 'DEFAULT' }),
        log: (object) => redactSecrets(object) as Record<string, unknown>,
      },
      hooks: { logMethod: withoutStackBelowError },
      mixin: (_object, _level, instance) => ({ [BOUND]: instance.bindings() }),
      mixinMergeStrategy: (object, mixed) => withoutBoundKeys(object as Record<string, unknown>, (mixed as { [BOUND]?: pino.Bindings })[BOUND] ?? {}),
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
  redactChildBindings(logger);
  return logger;
}

/**
 * pino formats a child's bindings once, outside `formatters.log`, and resets `formatters.bindings`
 * for children. Children are created with Object.create(parent), so this one own property of the
 * root covers every descendant, fastify's per-request loggers included.
 */
function redactChildBindings(logger: Logger): void {
  const pinoChild = logger.child;
  logger.child = function child<L extends string = never>(
    this: Logger,
    bindings: pino.Bindings,
    childOptions?: pino.ChildLoggerOptions<L>,
  ): PinoLogger<L> {
    const fresh = withoutBoundKeys(redactSecrets(bindings) as pino.Bindings, this.bindings());
    return Reflect.apply(pinoChild, this, [fresh, childOptions]) as PinoLogger<L>;
  };
}

const BOUND = Symbol('bound');

/** Keys pino writes on every line before the bindings and the call's fields. */
const WRITTEN_KEYS = ['level', 'severity', 'time'];

/**
 * pino writes a child's bindings and then the call's fields without merging them, so a field
 * the logger already binds (`chain` on a chain's logger) would appear twice in one line, which
 * Elasticsearch and OpenSearch refuse. A field equal to the bound value is left out; a
 * different one is kept as `<key>_here`, never dropped.
 */
function withoutBoundKeys(fields: Record<string, unknown>, bound: pino.Bindings): Record<string, unknown> {
  const clashes = Object.keys(fields).filter((key) => key in bound || WRITTEN_KEYS.includes(key));
  if (clashes.length === 0) return fields;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (!clashes.includes(key)) kept[key] = value;
    else if (!(key in bound) || !sameJson(value, bound[key])) kept[`${key}_here`] = value;
  }
  return kept;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(redactSecrets(a)) === JSON.stringify(b);
}

const ERROR_LEVEL = 50;

/**
 * A stack is a bug's trace: `error` and `fatal` lines keep their error's (unless a BridgeError,
 * below); a warn, info or debug line is an expected failure, retried or reported elsewhere, and
 * its error's stack through the bundle would be a kilobyte of chunk names at every transient one.
 */
function withoutStackBelowError(this: Logger, args: Parameters<pino.LogFn>, method: pino.LogFn, level: number): void {
  const [fields, ...rest] = args as unknown[];
  if (level >= ERROR_LEVEL || fields === null || typeof fields !== 'object' || !((fields as { err?: unknown }).err instanceof Error)) {
    method.apply(this, args);
    return;
  }
  const { stack: _stack, ...serialized } = pino.stdSerializers.err((fields as { err: Error }).err);
  method.apply(this, [{ ...fields, err: serialized }, ...rest] as Parameters<pino.LogFn>);
}

/**
 * `err` has one shape on every line, an object, or Elasticsearch and OpenSearch (dynamic
 * mapping) refuse whichever shape comes second: an Error is pino's serialization (type,
 * message, stack, cause chain, own fields), then secrets out; text (the crank keeps its failures
 * as text) is `{ message }`. A BridgeError's stack is left out: its message already names the
 * chain, the call and what to do, and a stack through the bundle is a kilobyte of chunk names on
 * every transient failure. Any other error keeps its stack (a bug's only trace).
 */
export function serializeError(err: unknown): unknown {
  if (err === null || typeof err !== 'object') return { message: String(err) };
  const serialized = redactSecrets(err) as Record<string, unknown>;
  // `code` is text on our errors and Node's (CHAIN__RPC_FAILED, ECONNRESET), a number on a JSON-RPC error (-32601): text on every line.
  const coded = typeof serialized['code'] === 'number' ? { ...serialized, code: String(serialized['code']) } : serialized;
  if (!isBridgeErrorShape(err)) return coded;
  const { stack: _stack, ...withoutStack } = coded;
  return withoutStack;
}

/** A BridgeError, or its serialization: formatters.log (redactSecrets) has serialized the line's errors before this serializer runs. */
function isBridgeErrorShape(err: object): boolean {
  return err instanceof BridgeError || ('name' in err && err.name === 'BridgeError' && 'code' in err);
}
