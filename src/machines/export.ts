import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { AnyStateNode } from 'xstate';
import { crankMachine } from './crank-machine.js';

/**
 * `npm run machine:export [file]`: the crank machine's definition (`machine.toJSON()`) as
 * JSON, for the Stately visualizer or a review. Written to `file`, or to stdout without one.
 * Loads no chain client and opens no connection. `crankMachineGraph()` is the same machine
 * as states and transitions for GET /crank/ui to draw.
 */

export function crankMachineDefinition(): string {
  return `${JSON.stringify(crankMachine.toJSON(), null, 2)}\n`;
}

export interface MachineGraphState {
  id: string;
  key: string;
  type: string;
  /** Id of the initial child state, for compound states. */
  initial: string | null;
  tags: string[];
  /** Actors the state invokes (`readAndPlan`, `submitAction`). */
  invokes: string[];
  states: MachineGraphState[];
}

export interface MachineGraphTransition {
  source: string;
  target: string;
  /** The event type; `always` for an eventless transition. */
  event: string;
  guard: string | null;
}

export interface MachineGraph {
  root: MachineGraphState;
  transitions: MachineGraphTransition[];
}

/**
 * States and targeted transitions, eventless ones included (`toJSON()` leaves out `always`),
 * read from the machine's state nodes: the drawing can never drift from the machine.
 */
export function crankMachineGraph(): MachineGraph {
  const transitions: MachineGraphTransition[] = [];
  const visit = (node: AnyStateNode): MachineGraphState => {
    for (const transition of [...node.transitions.values()].flat().concat(node.always ?? [])) {
      for (const target of transition.target ?? []) {
        transitions.push({ source: node.id, target: target.id, event: transition.eventType || 'always', guard: guardName(transition.guard) });
      }
    }
    return {
      id: node.id,
      key: node.key,
      type: node.type,
      initial: node.initial?.target[0]?.id ?? null,
      tags: [...node.tags],
      invokes: node.invoke.map((invoke) => String(invoke.src)),
      states: Object.values(node.states).map(visit),
    };
  };
  return { root: visit(crankMachine.root), transitions };
}

/** A named guard's name; a higher-order one (`and([...])`) as `and(a, b)`. */
function guardName(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && 'type' in guard) return String(guard.type);
  if (typeof guard === 'function' && 'guards' in guard && Array.isArray(guard.guards)) {
    return `${guard.name}(${guard.guards.map(guardName).join(', ')})`;
  }
  return 'guarded';
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
