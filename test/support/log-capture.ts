import { createLogger, type LogLevel, type Logger } from '../../src/log/logger.js';

export interface CapturedLogs {
  logger: Logger;
  /** Everything written so far, as the raw text of the JSON lines. */
  text(): string;
  /** The JSON lines parsed. */
  records(): Array<Record<string, unknown>>;
}

/** The real logger writing into memory, so tests read the emitted JSON lines (no mocks). */
export function captureLogs(level: LogLevel = 'trace'): CapturedLogs {
  const lines: string[] = [];
  const logger = createLogger({ level, destination: { write: (line: string) => void lines.push(line) } });
  return {
    logger,
    text: () => lines.join(''),
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
