import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema';
import { errorText } from '../../common/error-text';

/**
 * The form checks parameters against each agent's JSON Schema before sending, so a person sees
 * what is wrong beside the field; the control plane checks again with ajv (common/ajv.ts) and its
 * answer is shown the same way.
 *
 * Why not ajv here: ajv compiles validators with `new Function`, which needs `'unsafe-eval'` in
 * the page's CSP. @cfworker/json-schema interprets the schema instead (no eval), so the CSP stays
 * `script-src 'self'`. The messages are ajv's words (validate.test.ts pins them against ajv), and
 * defaults are filled in first on a copy, as ajv's `useDefaults` does on the server, so a value the
 * form accepts is never refused by the server for a different reason.
 */

/** The draft ajv's default class speaks (the server's validator). */
const DRAFT = '7';

const FORMAT_WORDS: Record<string, string> = {
  uri: 'a URL (https://…)',
  url: 'a URL (https://…)',
  email: 'an email address',
  date: 'a date (YYYY-MM-DD)',
  'date-time': 'a date and time (ISO 8601)',
  uuid: 'a UUID',
  ipv4: 'an IPv4 address',
  hostname: 'a host name',
};

/** Keywords whose failure is only the sum of their sub-schemas' failures (reported separately). */
const CONTAINER_KEYWORDS = new Set(['properties', 'patternProperties', 'items', 'prefixItems', 'additionalItems', 'dependentSchemas', '$ref', 'allOf', 'false']);

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** ajv's `useDefaults`: fills missing properties that have a default, at every depth, in place. */
function applyDefaults(schema: unknown, value: unknown): void {
  if (!isObject(schema) || !isObject(value) || !isObject(schema.properties)) return;
  for (const [name, sub] of Object.entries(schema.properties)) {
    if (!isObject(sub)) continue;
    if (value[name] === undefined && 'default' in sub) value[name] = structuredClone(sub.default);
    applyDefaults(sub, value[name]);
  }
}

/** The value a JSON pointer ("#/properties/depth/minimum") names in the schema, if any. */
function at(root: unknown, pointer: string): unknown {
  let cur = root;
  for (const raw of pointer.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    const seg = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (!isObject(cur) && !Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

function pointerSegments(pointer: string): string[] {
  return pointer
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((s) => decodeURIComponent(s).replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** ajv's wording for one failed keyword (the same text the server would send back). */
function ajvMessage(keyword: string, limit: unknown, fallback: string): string {
  switch (keyword) {
    case 'type':
      return `must be ${Array.isArray(limit) ? limit.join(',') : String(limit)}`;
    case 'enum':
      return 'must be equal to one of the allowed values';
    case 'const':
      return 'must be equal to constant';
    case 'minimum':
      return `must be >= ${String(limit)}`;
    case 'maximum':
      return `must be <= ${String(limit)}`;
    case 'exclusiveMinimum':
      return `must be > ${String(limit)}`;
    case 'exclusiveMaximum':
      return `must be < ${String(limit)}`;
    case 'multipleOf':
      return `must be multiple of ${String(limit)}`;
    case 'minLength':
      return `must NOT have fewer than ${String(limit)} characters`;
    case 'maxLength':
      return `must NOT have more than ${String(limit)} characters`;
    case 'pattern':
      return `must match pattern "${String(limit)}"`;
    case 'minItems':
      return `must NOT have fewer than ${String(limit)} items`;
    case 'maxItems':
      return `must NOT have more than ${String(limit)} items`;
    case 'minProperties':
      return `must NOT have fewer than ${String(limit)} properties`;
    case 'maxProperties':
      return `must NOT have more than ${String(limit)} properties`;
    case 'additionalProperties':
      return 'must NOT have additional properties';
    case 'anyOf':
      return 'must match a schema in anyOf';
    case 'oneOf':
      return 'must match exactly one schema in oneOf';
    case 'not':
      return 'must NOT be valid';
    default:
      return fallback;
  }
}

/** ajv's " (items ## j and i are identical)": it scans from the end, so j is the later index. */
function duplicatePair(items: unknown): string {
  if (!Array.isArray(items)) return '';
  const seen = new Map<string, number>();
  for (let i = items.length - 1; i >= 0; i--) {
    const key = JSON.stringify(items[i]);
    const j = seen.get(key);
    if (j !== undefined) return ` (items ## ${j} and ${i} are identical)`;
    seen.set(key, i);
  }
  return '';
}

/** The validator's failures in words, by top-level field ('' for the object as a whole). */
function fieldErrors(schema: Json, value: Json, errors: readonly OutputUnit[]): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (field: string, message: string) => {
    out[field] ??= message;
  };
  for (const e of errors) {
    const path = pointerSegments(e.instanceLocation);
    const field = path[0] ?? '';
    const limit = at(schema, e.keywordLocation);
    if (e.keyword === 'required') {
      const where = path.length === 0 ? value : at(value, e.instanceLocation);
      const missing = (Array.isArray(limit) ? limit : []).filter((n): n is string => typeof n === 'string' && isObject(where) && where[n] === undefined);
      if (path.length === 0) for (const name of missing) put(name, 'is required');
      else put(field, `must have required property '${missing[0] ?? ''}'`);
    } else if (e.keyword === 'format') {
      put(field, `must be ${FORMAT_WORDS[String(limit)] ?? `in the format "${String(limit)}"`}`);
    } else if (e.keyword === 'additionalProperties') {
      // The property itself is reported by its own "false" sub-error; here only its name matters.
      if (path.length === 0 && limit === false) {
        const known = isObject(schema.properties) ? schema.properties : {};
        for (const name of Object.keys(value)) if (!(name in known)) put(name, 'is not a parameter of this agent');
      } else if (path.length > 0) put(field, ajvMessage('additionalProperties', limit, e.error));
    } else if (e.keyword === 'uniqueItems') {
      put(field, `must NOT have duplicate items${duplicatePair(at(value, e.instanceLocation))}`);
    } else if (!CONTAINER_KEYWORDS.has(e.keyword)) {
      put(field, ajvMessage(e.keyword, limit, e.error));
    }
  }
  return out;
}

const cache = new Map<string, Validator | { broken: string }>();

/** Errors by field name ('' for the object as a whole); empty when the parameters are valid. */
export function checkParameters(schema: Record<string, unknown>, parameters: Record<string, unknown>): Record<string, string> {
  const key = JSON.stringify(schema);
  let validator = cache.get(key);
  if (!validator) {
    try {
      validator = new Validator(schema as Schema, DRAFT, false);
    } catch (err) {
      validator = { broken: errorText(err) };
    }
    cache.set(key, validator);
  }
  if ('broken' in validator) return { '': `the agent's schema does not compile: ${validator.broken}` };
  // A copy: filled-in defaults never change the form's state.
  const value = structuredClone(parameters);
  applyDefaults(schema, value);
  let result: ReturnType<Validator['validate']>;
  try {
    result = validator.validate(value);
  } catch (err) {
    // The interpreter finds a broken schema (a bad $ref, a bad pattern) only when it walks it.
    return { '': `the agent's schema does not compile: ${errorText(err)}` };
  }
  return result.valid ? {} : fieldErrors(schema, value, result.errors);
}
