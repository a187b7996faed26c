import { createAjv, type ErrorObject, type ValidateFunction } from '../../common/ajv';
import { errorText } from '../../common/error-text';

/** The control plane checks run parameters with the project's one ajv configuration (common/ajv.ts). */
const ajv = createAjv();

/** Compiled validators by schema text: blueprints are re-registered often with the same schema. */
const cache = new Map<string, ValidateFunction>();
const CACHE_MAX = 500;

export interface SchemaIssue {
  /** "url", "tags.1", or "" for the parameters object itself. */
  path: string;
  message: string;
}

export function issuesOf(errors: ErrorObject[] | null | undefined): SchemaIssue[] {
  return (errors ?? []).slice(0, 20).map((e) => {
    let path = e.instancePath ? e.instancePath.slice(1).replaceAll('/', '.') : '';
    // "must have required property 'url'" belongs to the field that is missing.
    if (e.keyword === 'required' && typeof e.params.missingProperty === 'string') path = path ? `${path}.${e.params.missingProperty}` : e.params.missingProperty;
    if (e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string') path = e.params.additionalProperty;
    return { path, message: e.message ?? 'is invalid' };
  });
}

/**
 * Checks (a copy of) the parameters against a blueprint's schema; on success returns them with
 * the schema's defaults filled in.
 */
export function validateParameters(schemaText: string, parameters: Record<string, unknown>): { ok: true; value: Record<string, unknown> } | { ok: false; issues: SchemaIssue[] } {
  let validate = cache.get(schemaText);
  if (!validate) {
    try {
      validate = ajv.compile(JSON.parse(schemaText) as Record<string, unknown>);
    } catch (err) {
      return { ok: false, issues: [{ path: '', message: `the agent's parameters_schema does not compile: ${errorText(err)}` }] };
    }
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(schemaText, validate);
  }
  const value = structuredClone(parameters);
  if (validate(value)) return { ok: true, value };
  return { ok: false, issues: issuesOf(validate.errors) };
}
