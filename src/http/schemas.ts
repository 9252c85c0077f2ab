import { z } from 'zod';
import { crankHealthSchema, crankPollOutcomeSchema, crankReportSchema } from '../machines/crank-service.js';
import { HEALTH_STATUSES } from '../machines/health-status.js';

/**
 * Response schemas of SPEC §2.2 and §2.3, converted from the zod schemas that also give the
 * crank's types (src/machines/crank-service.ts). fastify serializes with them, so a response
 * carries exactly these fields whatever else the crank's objects hold.
 */

/** Draft 7, the JSON Schema version fastify's serializer reads; its `$schema` tag is left out. */
function responseSchema(schema: z.ZodType): object {
  const { $schema: _draft, ...jsonSchema } = z.toJSONSchema(schema, { target: 'draft-7' });
  return jsonSchema;
}

/** BridgeHealthSnapshot; HTTP 200 for ok and degraded, 503 for stalled. */
export const healthSchema = responseSchema(
  z.strictObject({ status: z.enum(HEALTH_STATUSES), service: z.string(), crank: crankHealthSchema }),
);

/** CrankReportResponse. */
export const crankReportResponseSchema = responseSchema(crankReportSchema);

export const killSchema = responseSchema(z.strictObject({ status: z.literal('shutting_down'), message: z.string() }));

/** POST /crank/poll: whether the nudge started a cycle or joined the running one. */
export const pollSchema = responseSchema(z.strictObject({ status: crankPollOutcomeSchema }));
