/** The crank (docs/crank.md), loaded by src/index.ts only when the runtime configuration is present. */
export { startCrank } from './start-crank.js';
