import { describe, expect, it } from 'vitest';
import { RESUME_REFUSED } from '../../../protocol';
import { parseInvocation } from './invocation';

const good = {
  schema_version: '2.2',
  mode: 'start',
  session_id: 'ses_abc123',
  parameters: { url: 'https://example.com', depth: 2 },
  command: 'python -m crawler.main',
  project_dir: '/path/to/project',
  gateway_url: 'http://127.0.0.1:8766',
};

describe('parseInvocation (schema 2.2 on stdin)', () => {
  it('accepts the spec’s invocation', () => {
    const r = parseInvocation(JSON.stringify(good));
    expect(r.ok && r.invocation).toMatchObject({ command: 'python -m crawler.main', parameters: { depth: 2 } });
  });

  it('refuses resume: deterministic agents are stateless', () => {
    const r = parseInvocation(JSON.stringify({ ...good, mode: 'resume' }));
    expect(!r.ok && r.error).toContain(RESUME_REFUSED);
  });

  it('says what is wrong with a bad invocation', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['not json', /not JSON/],
      [{ ...good, schema_version: '2.1' }, /schema_version/],
      [{ ...good, command: '' }, /command/],
      [{ ...good, command: undefined }, /command/],
      [{ ...good, gateway_url: 'nope' }, /gateway_url/],
      [{ ...good, parameters: { 'bad key': 1 } }, /parameter names/],
      [{ ...good, parameters: [1, 2] }, /parameters/],
    ];
    for (const [input, why] of cases) {
      const r = parseInvocation(typeof input === 'string' ? input : JSON.stringify(input));
      expect(r.ok, String(why)).toBe(false);
      expect(!r.ok && r.error).toMatch(why);
    }
  });
});
