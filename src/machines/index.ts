/** The crank (docs/crank.md): startCrank runs it, the rest is for tests and tools. */
export { startCrank, type StartCrankOptions } from './start-crank.js';
export type { CrankHealth, CrankReport, CrankService } from './crank-service.js';
