import { z } from 'zod';
import { compileSchema, createAjv, describeAjvErrors } from '../../common/ajv';
import { DTA_TOOLS, DtaInvocationSchema, DtaOutputSchema, type DtaTool } from '../../protocol';
import { measureOf } from './adapters';

/**
 * The contract as JSON Schema, for whoever is not TypeScript (a planner, a Python verifier, the
 * workshop form): generated from the zod schemas in protocol/dta.ts, so the two never drift, and
 * checked with the project's ajv (draft-07, ajv's default dialect).
 */
export const INVOCATION_JSON_SCHEMA = z.toJSONSchema(DtaInvocationSchema, { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
export const OUTPUT_JSON_SCHEMA = z.toJSONSchema(DtaOutputSchema, { io: 'output', target: 'draft-7' }) as Record<string, unknown>;

/** One tool's invocation schema: the common contract with that tool's params. */
export function toolJsonSchema(tool: DtaTool): { invocation: Record<string, unknown>; params: Record<string, unknown>; output: Record<string, unknown> } {
  return { invocation: INVOCATION_JSON_SCHEMA, params: measureOf(tool).paramsSchema, output: OUTPUT_JSON_SCHEMA };
}

const ajv = createAjv();
const outputCheck = compileSchema(ajv, OUTPUT_JSON_SCHEMA);
const invocationCheck = compileSchema(ajv, INVOCATION_JSON_SCHEMA);

function check(c: typeof outputCheck, value: unknown): string | null {
  if (!c.ok) return `schema does not compile: ${c.reason}`;
  return c.validate(structuredClone(value)) ? null : describeAjvErrors(c.validate.errors, '(root)');
}

/** null when `value` is a valid DTA output by the JSON Schema, else why not. */
export function checkOutputJson(value: unknown): string | null {
  return check(outputCheck, value);
}

export function checkInvocationJson(value: unknown): string | null {
  return check(invocationCheck, value);
}

export const TOOLS: readonly DtaTool[] = DTA_TOOLS;
