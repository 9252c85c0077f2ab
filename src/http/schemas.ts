import * as z from 'zod';
import { crankPollOutcomeSchema, crankReportSchema, crankRoleViewSchema } from '../machines/crank-types.js';
import { crankHealthSchema, HEALTH_STATUSES } from '../machines/health.js';

/**
 * Response schemas of SPEC §2.2 and §2.3, converted from the zod schemas that also give the
 * crank's types (src/machines/crank-types.ts, src/machines/health.ts). fastify serializes with them, so a response
 * carries exactly these fields whatever else the crank's objects hold.
 */

type JsonSchema = { [keyword: string]: unknown };

/** Draft 7, the JSON Schema version fastify's serializer reads; its `$schema` tag is left out. */
function responseSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _draft, ...jsonSchema } = z.toJSONSchema(schema, { target: 'draft-7' });
  return forSerializer(jsonSchema);
}

/**
 * The serializer checks a value against each branch of an `anyOf`/`oneOf` and throws when none
 * matches, and writes a `const` whatever the value: a snapshot a little off its type (a float
 * time, a field too many) would turn /health into a 500, or be misreported. So every field is
 * written by its plain type: a nullable is `type: [t, "null"]`, a union of objects one object
 * with every branch's fields (required: those all branches require), and no `const`.
 */
function forSerializer(node: JsonSchema): JsonSchema {
  const { const: _value, anyOf, oneOf, properties, items, ...rest } = node;
  const branches = (anyOf ?? oneOf) as JsonSchema[] | undefined;
  if (branches !== undefined) return joinBranches(branches.map(forSerializer));
  const plain: JsonSchema = { ...rest };
  if (properties !== undefined) {
    plain['properties'] = Object.fromEntries(
      Object.entries(properties as Record<string, JsonSchema>).map(([name, value]) => [name, forSerializer(value)]),
    );
  }
  if (items !== undefined) plain['items'] = forSerializer(items as JsonSchema);
  return plain;
}

function joinBranches(branches: JsonSchema[]): JsonSchema {
  const [value, ...others] = branches.filter((branch) => branch['type'] !== 'null');
  if (value === undefined) return { type: 'null' };
  const nullable = others.length + 1 < branches.length;
  const joined = others.reduce(joinObjects, value);
  return nullable ? { ...joined, type: [joined['type'], 'null'] } : joined;
}

function joinObjects(left: JsonSchema, right: JsonSchema): JsonSchema {
  if (left['type'] !== 'object' || right['type'] !== 'object') throw new Error('a response schema may join only objects in a union');
  const required = (left['required'] as string[] | undefined) ?? [];
  const rightRequired = new Set((right['required'] as string[] | undefined) ?? []);
  return {
    ...left,
    properties: { ...(left['properties'] as object), ...(right['properties'] as object) },
    required: required.filter((name) => rightRequired.has(name)),
  };
}

/** BridgeHealthSnapshot; HTTP 200 for ok and degraded, 503 for stalled. */
export const healthSchema = responseSchema(z.strictObject({ status: z.enum(HEALTH_STATUSES), service: z.string(), crank: crankHealthSchema }));

/** CrankReportResponse, and the crank's role beside it. */
export const crankReportResponseSchema = responseSchema(z.strictObject({ ...crankReportSchema.shape, ...crankRoleViewSchema.shape }));

export const killSchema = responseSchema(z.strictObject({ status: z.literal('shutting_down'), message: z.string() }));

/** POST /crank/poll: whether the nudge started a cycle or joined the running one, and the crank's role. */
export const pollSchema = responseSchema(z.strictObject({ status: crankPollOutcomeSchema, ...crankRoleViewSchema.shape }));
