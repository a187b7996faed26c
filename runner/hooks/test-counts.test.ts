import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isTestCommand, parseTestCounts, stripAnsi } from './test-counts';

/** Real outputs captured from the runners (samples/*.txt), colours included where the runner printed them. */
const sample = (name: string) => fs.readFileSync(new URL(`./samples/${name}`, import.meta.url), 'utf8');

describe('parseTestCounts on real runner output', () => {
  it('node --test, TAP reporter (not a TTY: what an agent’s Bash tool sees)', () => {
    expect(parseTestCounts(sample('node-tap.txt'))).toEqual({ passed: 7, failed: 0 });
    expect(parseTestCounts(sample('node-tap-fail.txt'))).toEqual({ passed: 2, failed: 1 });
  });

  it('node --test, spec reporter (a TTY: what a person sees), with CRLF from the PTY', () => {
    expect(parseTestCounts(sample('node-spec.txt'))).toEqual({ passed: 7, failed: 0 });
    expect(parseTestCounts(sample('node-spec.txt').replace(/\n/g, '\r\n'))).toEqual({ passed: 7, failed: 0 });
  });

  it('vitest (coloured), counting tests rather than test files', () => {
    expect(parseTestCounts(sample('vitest-fail.txt'))).toEqual({ passed: 3, failed: 1 });
    expect(parseTestCounts(sample('vitest-pass.txt'))).toEqual({ passed: 3, failed: 0 });
  });

  it('pytest (coloured)', () => {
    expect(parseTestCounts(sample('pytest-fail.txt'))).toEqual({ passed: 3, failed: 1 });
    expect(parseTestCounts(sample('pytest-pass.txt'))).toEqual({ passed: 3, failed: 0 });
    expect(parseTestCounts('==== 2 failed, 5 passed, 1 error, 3 warnings in 1.20s ====')).toEqual({ passed: 5, failed: 3 });
  });

  // jest and mocha are not installed here; these are their summary formats as they print them.
  it('jest', () => {
    const out = ['Test Suites: 1 failed, 2 passed, 3 total', 'Tests:       1 failed, 1 skipped, 9 passed, 11 total', 'Snapshots:   0 total', 'Time:        1.52 s'].join('\n');
    expect(parseTestCounts(out)).toEqual({ passed: 9, failed: 1 });
    expect(parseTestCounts('\x1b[1mTests:\x1b[22m       \x1b[1m\x1b[32m4 passed\x1b[39m\x1b[22m, 4 total\n')).toEqual({ passed: 4, failed: 0 });
  });

  it('mocha', () => {
    expect(parseTestCounts('\n  12 passing (34ms)\n  2 pending\n  1 failing\n\n  1) lamp\n')).toEqual({ passed: 12, failed: 1 });
    expect(parseTestCounts('  \x1b[92m 5 passing\x1b[0m\x1b[90m (8ms)\x1b[0m\n')).toEqual({ passed: 5, failed: 0 });
  });

  it('null when there is no summary', () => {
    expect(parseTestCounts('')).toBeNull();
    expect(parseTestCounts('npm ERR! Missing script: "test"')).toBeNull();
  });

  it('stripAnsi removes colours and cursor moves but keeps the text', () => {
    expect(stripAnsi('\x1b[1;32mok\x1b[0m \x1b[2K\x1b[1Gdone\x1b]0;title\x07!')).toBe('ok done!');
  });
});

describe('isTestCommand', () => {
  it.each([
    'npm test',
    'npm t',
    'npm run test',
    'npm run test:unit -- --watch=false',
    'yarn test',
    'pnpm test',
    'npx vitest run',
    'vitest',
    './node_modules/.bin/jest --ci',
    'npx jest',
    'pytest -q',
    'python -m pytest tests/',
    'node --test tests/',
    'node --import tsx --test x.test.ts',
    'cd app && npm test',
    'CI=1 npm test',
    'mocha',
  ])('%s runs tests', (cmd) => expect(isTestCommand(cmd)).toBe(true));

  it.each(['npm install', 'git status', 'echo npm test', 'cat test.txt', 'ls tests/', 'npm run build', 'node server.js'])('%s does not', (cmd) =>
    expect(isTestCommand(cmd)).toBe(false),
  );
});
