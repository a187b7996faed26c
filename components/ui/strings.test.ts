import { describe, expect, it } from 'vitest';
import { healthLabel, questFor } from './strings';

describe('quest text for "send an agent"', () => {
  it('names the patrol, the file and line, the alert and the first log lines', () => {
    const q = questFor({ kind: 'test', message: 'Tests: tests/a.test.js:4 — adds: AssertionError', path: 'tests/a.test.js', line: 4, excerpt: '✖ adds\n  AssertionError\n\n  1 !== 2\n' });
    expect(q).toContain('The tests patrol fails in tests/a.test.js:4.');
    expect(q).toContain('Alert: Tests: tests/a.test.js:4 — adds: AssertionError');
    expect(q).toContain('Log:\n✖ adds\n  AssertionError\n  1 !== 2');
    expect(q).toMatch(/do not weaken or skip the check/);
    expect(questFor({ kind: 'build', message: 'Build failed (exit 2)', path: null, line: null, excerpt: '' })).toContain('fails in the repository.');
  });
  it('says health in words', () => {
    expect(healthLabel(null)).toBe('no patrol results yet');
    expect(healthLabel(0.556)).toBe('health 56%');
  });
});
