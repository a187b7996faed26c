import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { errorText } from './error-text';

/**
 * The one ajv configuration of the project. The runner (blueprints' parameters, DTA schemas), the
 * control plane (run parameters) and the workshop form check JSON Schema the same way, so a value
 * the form accepts is never refused by the server or the runner for a different reason:
 * - allErrors: a person sees every wrong field at once, not the first;
 * - useDefaults: the schema's defaults are filled in (callers validate a copy when they must not
 *   change the caller's object);
 * - strict: false: blueprint and adapter authors add annotations ajv does not know;
 * - the standard formats (uri, email, date-time…) from ajv-formats.
 */
export const AJV_OPTIONS: Readonly<Options> = Object.freeze({ allErrors: true, useDefaults: true, strict: false });

/**
 * The one variation allowed: the JSON Schema migrator DTA checks files without filling anything
 * (a missing default is a finding: `useDefaults: false`) and fixes them with type coercion
 * (`coerceTypes: true`). Everything else stays the same.
 */
export interface AjvVariant {
  useDefaults?: boolean;
  coerceTypes?: boolean;
}

export function createAjv(variant: AjvVariant = {}): Ajv {
  const ajv = new Ajv({ ...AJV_OPTIONS, ...variant });
  addFormats(ajv);
  return ajv;
}

/** Compiles a schema or says why it cannot be. */
export function compileSchema(ajv: Ajv, schema: Record<string, unknown>): { ok: true; validate: ValidateFunction } | { ok: false; reason: string } {
  try {
    return { ok: true, validate: ajv.compile(schema) };
  } catch (err) {
    return { ok: false, reason: errorText(err) };
  }
}

/** "url: must match format \"uri\"; (parameters): must have required property 'url'" */
export function describeAjvErrors(errors: ErrorObject[] | null | undefined, root = '(parameters)'): string {
  return (errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : root}: ${e.message ?? 'is invalid'}`)
    .join('; ');
}

export type { ErrorObject, ValidateFunction };
