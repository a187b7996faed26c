import { describe, expect, it } from 'vitest';
import { createAjv, type ErrorObject } from '../../common/ajv';
import { checkParameters } from './validate';

/**
 * The browser's eval-free validator must say what the server's ajv says (same fields, same words),
 * or a person would fix one message and get another from the server. This pins the two together:
 * ajv's errors, put into words by the rules the workshop used when it ran ajv itself.
 */
const FORMAT_WORDS: Record<string, string> = { uri: 'a URL (https://…)', email: 'an email address', date: 'a date (YYYY-MM-DD)', uuid: 'a UUID' };
function ajvFieldErrors(errors: ErrorObject[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of errors) {
    let field = e.instancePath.split('/')[1] ?? '';
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required' && e.instancePath === '') {
      field = String(e.params.missingProperty);
      message = 'is required';
    } else if (e.keyword === 'format') {
      message = `must be ${FORMAT_WORDS[String(e.params.format)] ?? `in the format "${String(e.params.format)}"`}`;
    } else if (e.keyword === 'additionalProperties' && e.instancePath === '') {
      field = String(e.params.additionalProperty);
      message = 'is not a parameter of this agent';
    }
    out[field] ??= message;
  }
  return out;
}
function serverSays(schema: Record<string, unknown>, value: Record<string, unknown>): Record<string, string> {
  const validate = createAjv().compile(schema);
  return validate(structuredClone(value)) ? {} : ajvFieldErrors(validate.errors ?? []);
}

const SCHEMA = {
  type: 'object',
  required: ['url', 'mode'],
  properties: {
    url: { type: 'string', format: 'uri' },
    email: { type: 'string', format: 'email' },
    day: { type: 'string', format: 'date' },
    id: { type: 'string', format: 'uuid' },
    depth: { type: 'integer', default: 2, minimum: 0, maximum: 9 },
    ratio: { type: 'number', exclusiveMinimum: 0, multipleOf: 0.5 },
    name: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
    mode: { type: 'string', enum: ['fast', 'deep'] },
    kind: { const: 'x' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2, uniqueItems: true },
    extra: { type: 'object', required: ['k'], properties: { k: { type: 'integer' } }, additionalProperties: false },
    level: { type: 'string', default: 'info' },
  },
  additionalProperties: false,
};

const CASES: Array<[string, Record<string, unknown>]> = [
  ['valid', { url: 'https://x.com', mode: 'fast' }],
  ['wrong format and type, missing required', { url: 'not a url', depth: 1.5 }],
  ['unknown field and bad enum', { url: 'https://x.com', mode: 'slow', other: 1 }],
  ['number limits', { url: 'https://x.com', mode: 'fast', depth: -1, ratio: 0.3 }],
  ['upper limit, exclusive minimum', { url: 'https://x.com', mode: 'fast', depth: 10, ratio: 0 }],
  ['string limits', { url: 'https://x.com', mode: 'fast', name: 'a' }],
  ['pattern', { url: 'https://x.com', mode: 'fast', name: 'ABC' }],
  ['too long', { url: 'https://x.com', mode: 'fast', name: 'abcdefg' }],
  ['const', { url: 'https://x.com', mode: 'fast', kind: 'y' }],
  ['array limits', { url: 'https://x.com', mode: 'fast', tags: [] }],
  ['array items and uniqueness', { url: 'https://x.com', mode: 'fast', tags: ['a', 'a'] }],
  ['uniqueness further in', { url: 'https://x.com', mode: 'fast', tags: ['b', 'a', 'c', 'a'] }],
  ['array item type', { url: 'https://x.com', mode: 'fast', tags: [1] }],
  ['nested object', { url: 'https://x.com', mode: 'fast', extra: { q: 1 } }],
  ['nested type', { url: 'https://x.com', mode: 'fast', extra: { k: 'one' } }],
  ['other formats', { url: 'https://x.com', mode: 'fast', email: 'nope', day: '2024-13-40', id: 'xyz' }],
  ['a default does not hide a type error', { url: 'https://x.com', mode: 'fast', level: 3 }],
];

describe('the workshop validator (no eval)', () => {
  it.each(CASES)('says what the server says: %s', (_name, value) => {
    expect(checkParameters(SCHEMA, value)).toEqual(serverSays(SCHEMA, value));
  });

  it('fills defaults like the server before checking, without changing the form', () => {
    const schema = { type: 'object', required: ['depth'], properties: { depth: { type: 'integer', default: 2 } } };
    const form = {};
    expect(checkParameters(schema, form)).toEqual({});
    expect(serverSays(schema, form)).toEqual({});
    expect(form).toEqual({});
  });

  it('gives a clear error for a schema it cannot use', () => {
    expect(checkParameters({ type: 'object', properties: { a: { $ref: '#/nowhere' } } }, { a: 1 })['']).toMatch(/does not compile/);
  });

  it('never compiles code (the page CSP has no unsafe-eval)', () => {
    const original = globalThis.Function;
    // Any `new Function` / `Function(...)` during validation throws, as the browser would under the CSP.
    globalThis.Function = new Proxy(original, {
      construct() {
        throw new EvalError('code generation from strings disallowed');
      },
      apply() {
        throw new EvalError('code generation from strings disallowed');
      },
    });
    try {
      expect(checkParameters({ type: 'object', properties: { n: { type: 'integer', minimum: 3 } } }, { n: 1 })).toEqual({ n: 'must be >= 3' });
    } finally {
      globalThis.Function = original;
    }
  });
});
