import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/**
 * ajv as the runner uses it for blueprints' parameters_schema: every error (not just the first),
 * the standard formats (uri, email, date-time…), defaults filled in, unknown keywords tolerated
 * (blueprint authors add annotations). The control plane and the workshop form configure theirs
 * the same way; protocol/ cannot hold it because it imports nothing but zod.
 */
export function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
  addFormats(ajv);
  return ajv;
}

/** "url: must match format \"uri\"; (root): must have required property 'url'" */
export function describeAjvErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : '(parameters)'}: ${e.message ?? 'is invalid'}`)
    .join('; ');
}

/** Compiles a schema or says why it cannot be. */
export function compileSchema(ajv: Ajv, schema: Record<string, unknown>): { ok: true; validate: ValidateFunction } | { ok: false; reason: string } {
  try {
    return { ok: true, validate: ajv.compile(schema) };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}
