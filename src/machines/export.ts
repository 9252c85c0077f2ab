import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { crankMachine } from './crank-machine.js';

/**
 * `npm run machine:export [file]`: the crank machine's definition (`machine.toJSON()`) as
 * JSON, for the Stately visualizer or a review. Written to `file`, or to stdout without one.
 * Loads no chain client and opens no connection.
 */

export function crankMachineDefinition(): string {
  return `${JSON.stringify(crankMachine.toJSON(), null, 2)}\n`;
}

function main(args: readonly string[]): void {
  const [file, ...rest] = args;
  if (rest.length > 0) {
    process.stderr.write(`usage: npm run machine:export [file] (got ${args.length} arguments)\n`);
    process.exitCode = 2;
    return;
  }
  if (file === undefined) process.stdout.write(crankMachineDefinition());
  else writeFileSync(file, crankMachineDefinition());
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) main(process.argv.slice(2));
