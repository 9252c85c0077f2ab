import { afterEach, expect } from 'vitest';
import { takeLogLineProblems } from './log-lines.js';

// vitest.config.ts setupFiles: after every test of the suite, no log line a server of it wrote
// (log-lines.ts) repeated a key or was not JSON.
afterEach(() => {
  expect(takeLogLineProblems(), 'log lines a pipeline would refuse').toEqual([]);
});
