import { createAjv, type ErrorObject, type ValidateFunction } from '../../common/ajv';

/**
 * The form checks parameters with the same JSON Schema rules the control plane applies (common/ajv.ts; it
 * validates a copy, so filled-in defaults never change the form's state), so a person sees what is wrong beside the field before sending; the
 * server checks again and its answer is shown the same way.
 */
const ajv = createAjv();
const cache = new Map<string, ValidateFunction>();

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

/** An ajv error in words, by field. */
export function fieldErrors(errors: ErrorObject[] | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of errors ?? []) {
    let field = e.instancePath.split('/')[1] ?? '';
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      field = String(e.params.missingProperty);
      message = 'is required';
    } else if (e.keyword === 'format') {
      message = `must be ${FORMAT_WORDS[String(e.params.format)] ?? `in the format "${String(e.params.format)}"`}`;
    } else if (e.keyword === 'additionalProperties') {
      field = String(e.params.additionalProperty);
      message = 'is not a parameter of this agent';
    }
    out[field] ??= message;
  }
  return out;
}

/** Errors by field name ('' for the object as a whole); empty when the parameters are valid. */
export function checkParameters(schema: Record<string, unknown>, parameters: Record<string, unknown>): Record<string, string> {
  const key = JSON.stringify(schema);
  let validate = cache.get(key);
  if (!validate) {
    try {
      validate = ajv.compile(schema);
    } catch (err) {
      return { '': `the agent's schema does not compile: ${err instanceof Error ? err.message : String(err)}` };
    }
    cache.set(key, validate);
  }
  return validate(structuredClone(parameters)) ? {} : fieldErrors(validate.errors);
}
