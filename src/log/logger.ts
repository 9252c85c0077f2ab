import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
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
    return Reflect.apply(pinoChild, this, [redactSecrets(bindings), childOptions]) as PinoLogger<L>;
  };
}

/** pino's error serializer (type, message, stack, cause chain, own fields), then secrets out. */
export function serializeError(err: unknown): unknown {
  return redactSecrets(err);
}
