import { describe, expect, it } from 'vitest';
import { fieldsOf, initialValues, toParameters } from './schema-form';
import { checkParameters } from './validate';

const SCHEMA = {
  type: 'object',
  required: ['url', 'mode'],
  properties: {
    url: { type: 'string', format: 'uri', title: 'Start URL', description: 'Where to begin' },
    depth: { type: 'integer', default: 2, minimum: 0 },
    ratio: { type: 'number' },
    verbose: { type: 'boolean', default: true },
    mode: { type: 'string', enum: ['fast', 'deep'] },
    tags: { type: 'array', items: { type: 'string' } },
    ports: { type: 'array', items: { type: 'integer' } },
    extra: { type: 'object' },
  },
  additionalProperties: false,
};

describe('the workshop form', () => {
  const fields = fieldsOf(SCHEMA);

  it('has one typed field per property, with labels, defaults and required marks', () => {
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['url', 'text', true],
      ['depth', 'integer', false],
      ['ratio', 'number', false],
      ['verbose', 'boolean', false],
      ['mode', 'enum', true],
      ['tags', 'list', false],
      ['ports', 'list', false],
      ['extra', 'json', false],
    ]);
    expect(fields[0]).toMatchObject({ label: 'Start URL', description: 'Where to begin', format: 'uri' });
    expect(initialValues(fields)).toEqual({ url: '', depth: '2', ratio: '', verbose: true, mode: '', tags: '', ports: '', extra: '' });
  });

  it('turns inputs into parameters and says what cannot be converted', () => {
    const ok = toParameters(fields, { url: 'https://x.com', depth: '3', ratio: '0.5', verbose: false, mode: '1', tags: 'a, b c,', ports: '80, 443', extra: '{"k":1}' });
    expect(ok).toEqual({
      parameters: { url: 'https://x.com', depth: 3, ratio: 0.5, verbose: false, mode: 'deep', tags: ['a', 'b c'], ports: [80, 443], extra: { k: 1 } },
      errors: {},
    });
    const bad = toParameters(fields, { url: '', depth: 'two', ratio: '', verbose: true, mode: '', tags: '', ports: '80, x', extra: '{' });
    expect(bad.errors).toEqual({ depth: 'must be a whole number', ports: '"x" is not a number', extra: 'is not valid JSON' });
    expect(bad.parameters).toEqual({ verbose: true });
  });

  it('validates with the schema and puts each message on its field', () => {
    expect(checkParameters(SCHEMA, { url: 'https://x.com', mode: 'fast' })).toEqual({});
    expect(checkParameters(SCHEMA, { url: 'not a url', depth: 1.5 })).toEqual({
      url: 'must be a URL (https://…)',
      depth: 'must be integer',
      mode: 'is required',
    });
    expect(checkParameters(SCHEMA, { url: 'https://x.com', mode: 'slow', other: 1 })).toMatchObject({ mode: 'must be equal to one of the allowed values', other: 'is not a parameter of this agent' });
  });
});
