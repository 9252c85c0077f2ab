/** The crank (docs/crank.md): startCrank runs it, the rest is for tests and tools. */
export { startCrank,  } from './start-crank.js';
;
