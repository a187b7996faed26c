import { describe, expect, it } from 'vitest';
import { compileSchema, createAjv, describeAjvErrors } from './ajv';

describe('common/ajv', () => {
  it('reports every error, checks formats, fills defaults and tolerates unknown keywords', () => {
    const compiled = compileSchema(createAjv(), {
      type: 'object',
      'x-annotation': 'authors add these',
      required: ['url', 'n'],
      properties: { url: { type: 'string', format: 'uri' }, n: { type: 'integer' }, mode: { type: 'string', default: 'dry-run' } },
    });
    expect(compiled.ok).toBe(true);
    if (!compiled.ok) return;
    expect(compiled.validate({ url: 'not a url', n: 'x' })).toBe(false);
    expect(compiled.validate.errors).toHaveLength(2);
    expect(describeAjvErrors(compiled.validate.errors)).toMatch(/url: must match format "uri"; n: must be integer/);
    const value: Record<string, unknown> = { url: 'https://example.com', n: 1 };
    expect(compiled.validate(value)).toBe(true);
    expect(value.mode).toBe('dry-run');
  });

  it('says why a schema does not compile', () => {
    const compiled = compileSchema(createAjv(), { type: 'no-such-type' });
    expect(compiled.ok).toBe(false);
  });
});
