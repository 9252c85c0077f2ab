import { createLogger, type LogLevel, type Logger } from '../../src/log/logger.js';
import { checkLogLine } from './log-lines.js';

export interface CapturedLogs {
  logger: Logger;
  /** Everything written so far, as the raw text of the JSON lines. */
  text(): string;
  /** The JSON lines parsed. */
  records(): Array<Record<string, unknown>>;
}

/** The real logger writing into memory, so tests read the emitted JSON lines (no mocks); each line is checked for a key written twice (log-lines.ts). */
export function captureLogs(level: LogLevel = 'trace'): CapturedLogs {
  const lines: string[] = [];
  const write = (line: string): void => {
    checkLogLine(line, 'captureLogs');
    lines.push(line);
  };
  const logger = createLogger({ level, destination: { write } });
  return {
    logger,
    text: () => lines.join(''),
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
