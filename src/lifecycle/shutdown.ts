import closeWithGrace from 'close-with-grace';
import type { Logger } from '../log/logger.js';
import type { CrankService } from '../machines/crank-service.js';
import { MAX_TIMER_DELAY_MS } from '../time.js';

/**
 * Graceful shutdown on SIGTERM, SIGINT (and the other signals close-with-grace handles) or
 * POST /kill: stop accepting requests, let a running crank cycle finish until the deadline, close,
 * exit 0. A second signal exits at once (code 1). An uncaught error closes the same way and exits 1.
 */

/** Granted after the crank's deadline to answer in-flight requests and close connections. */
const CLOSE_MARGIN_MS = 1500;

export interface ShutdownOptions {
  logger: Logger;
  /** How long a running cycle may take to finish (BRIDGE_SHUTDOWN_TIMEOUT_MS). */
  deadlineMs: number;
  /** The HTTP server: close() stops accepting and waits for in-flight requests. */
  server: { close(): Promise<unknown> };
  crank: Pick<CrankService, 'stop'>;
}

export interface Shutdown {
  /** Starts the graceful shutdown (POST /kill); later calls do nothing. */
  begin(): void;
}

export function installShutdown(options: ShutdownOptions): Shutdown {
  const { logger, deadlineMs } = options;
  let started = false;
  const handle = closeWithGrace(
    {
      // The hard stop: whatever still runs after the deadline plus the margin is cut off (exit 1).
      delay: Math.min(deadlineMs + CLOSE_MARGIN_MS, MAX_TIMER_DELAY_MS),
      logger: false,
      onSecondSignal: (signal) => logger.warn({ signal }, 'second signal during shutdown: exiting now'),
      onSecondError: (err) => logger.fatal({ err }, 'second uncaught error during shutdown: exiting now'),
      onTimeout: (delayMs) => logger.error({ delayMs }, 'shutdown did not finish in time: exiting now'),
    },
    async ({ signal, err, manual }) => {
      started = true;
      if (err !== undefined) logger.fatal({ err }, 'uncaught error: shutting down');
      else logger.info({ trigger: signal ?? (manual === true ? 'POST /kill' : 'event loop drained') }, 'shutting down');
      try {
        await closeService(options);
      } catch (closeError) {
        logger.error({ err: closeError }, 'shutdown failed');
        throw closeError;
      }
      logger.info('shutdown complete');
    },
  );
  return {
    begin: () => {
      if (started) return;
      started = true;
      handle.close();
    },
  };
}

/** HTTP close and crank stop run together: an in-flight POST /crank/once needs the cycle to end. */
async function closeService({ server, crank, deadlineMs }: ShutdownOptions): Promise<void> {
  await Promise.all([crank.stop(deadlineMs), server.close()]);
}
