import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseFindings } from './findings';

const sample = (name: string) => fs.readFileSync(new URL(`./samples/${name}`, import.meta.url), 'utf8');
const WT = '/wt/sess_1';
const DEMO = new Set(['package.json', 'src/core/schedule.js', 'src/core/lamp.js', 'tests/core/schedule.test.js', 'tests/core/lamp.test.js']);
const brief = (out: ReturnType<typeof parseFindings>) => out.map((f) => ({ path: f.path, line: f.line, message: f.message }));

describe('parseFindings', () => {
  it('node --test, spec reporter (a terminal): one finding for the failing test file, with the test name and error', () => {
    const out = parseFindings(sample('node-spec-fail.txt'), { worktree: WT, files: DEMO });
    expect(brief(out)).toEqual([
      { path: 'tests/core/schedule.test.js', line: 14, message: 'a December evening is dark: AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:' },
    ]);
    expect(out[0]!.excerpt).toContain('false !== true');
    expect(out[0]!.excerpt).not.toContain('node:internal');
  });

  it('node --test, TAP (no terminal): the location and stack point to the same file', () => {
    const out = parseFindings(sample('node-tap-fail.txt'), { worktree: WT, files: DEMO });
    expect(brief(out)).toEqual([{ path: 'tests/core/schedule.test.js', line: 13, message: expect.stringMatching(/^a December evening is dark/) }]);
  });

  it('an error thrown in the source is blamed on the first repository frame', () => {
    const text = ['✖ lighting works (1ms)', '  TypeError: lamp.light is not a function', `      at light (file://${WT}/src/core/lamp.js:9:3)`, `      at TestContext.<anonymous> (file://${WT}/tests/core/lamp.test.js:10:5)`].join('\n');
    expect(brief(parseFindings(text, { worktree: WT, files: DEMO }))).toEqual([
      { path: 'src/core/lamp.js', line: 9, message: 'lighting works: TypeError: lamp.light is not a function' },
    ]);
  });

  it('vitest', () => {
    const out = parseFindings(sample('../../hooks/samples/vitest-fail.txt'), { worktree: '/tmp/x', files: new Set(['a.test.ts']) });
    expect(brief(out)).toEqual([{ path: 'a.test.ts', line: 5, message: 'a.test.ts > bad: AssertionError: expected 1 to be 2 // Object.is equality' }]);
  });

  it('jest', () => {
    const text = [
      ' FAIL  src/sum.test.js',
      '  ● sum › adds',
      '',
      '    expect(received).toBe(expected) // Object.is equality',
      '',
      '      at Object.toBe (src/sum.test.js:4:17)',
      '',
      'Tests:       1 failed, 1 passed, 2 total',
    ].join('\n');
    expect(brief(parseFindings(text, { worktree: '/r', files: new Set(['src/sum.test.js']) }))).toEqual([
      { path: 'src/sum.test.js', line: 4, message: 'sum › adds: expect(received).toBe(expected) // Object.is equality' },
    ]);
  });

  it('pytest', () => {
    const out = parseFindings(sample('../../hooks/samples/pytest-fail.txt'), { worktree: '/tmp/x', files: new Set(['test_x.py']) });
    expect(brief(out)).toEqual([{ path: 'test_x.py', line: 4, message: 'test_d: assert 1 == 2' }]);
  });

  it('ESLint stylish: one finding per file, errors only, with the rule', () => {
    const text = ['', '/r/src/util/b.js', "  1:7   error  'unused' is assigned a value but never used  no-unused-vars", '  2:1   warning  Unexpected console statement  no-console', "  2:13  error  'missing' is not defined                     no-undef", '', '✖ 3 problems (2 errors, 1 warning)'].join('\n');
    const out = parseFindings(text, { worktree: '/r', files: new Set(['src/util/b.js']) });
    expect(brief(out)).toEqual([{ path: 'src/util/b.js', line: 1, message: "'unused' is assigned a value but never used (no-unused-vars)" }]);
    expect(out[0]!.count).toBe(2);
  });

  it('tsc, plain and pretty', () => {
    const files = new Set(['src/util/a.ts', 'src/b.ts']);
    const plain = "src/util/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.\nsrc/b.ts(2,39): error TS2362: bad";
    expect(brief(parseFindings(plain, { worktree: '/r', files }))).toEqual([
      { path: 'src/util/a.ts', line: 1, message: "error TS2322: Type 'string' is not assignable to type 'number'." },
      { path: 'src/b.ts', line: 2, message: 'error TS2362: bad' },
    ]);
    const pretty = "\x1b[96msrc/util/a.ts\x1b[0m:\x1b[93m1\x1b[0m:\x1b[93m7\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType 'string' is not assignable.\n\n1 const x = 1;\n\nFound 1 error in src/util/a.ts\x1b[90m:1\x1b[0m\n";
    expect(brief(parseFindings(pretty, { worktree: '/r', files }))).toEqual([{ path: 'src/util/a.ts', line: 1, message: "error TS2322: Type 'string' is not assignable." }]);
  });

  it('go test: package-relative names resolve by a unique suffix', () => {
    const text = ['--- FAIL: TestAdd (0.00s)', '    math_test.go:12: got 3, want 4', 'FAIL', 'FAIL\texample.com/m/pkg/math\t0.002s'].join('\n');
    expect(brief(parseFindings(text, { worktree: '/r', files: new Set(['pkg/math/math_test.go', 'pkg/math/math.go']) }))).toEqual([
      { path: 'pkg/math/math_test.go', line: 12, message: 'TestAdd: got 3, want 4' },
    ]);
  });

  it('compiler-style and av-check lines are findings by themselves; warnings, unknown files and node_modules are not', () => {
    const text = [
      'src/core/lamp.js:3: possible secret: password=[redacted]',
      'node_modules/x/index.js:1:1: error: nope',
      'lib/gone.c:1:1: error: not in the repository',
      `${WT}/src/core/schedule.js:2:5: warning: unused`,
    ].join('\n');
    expect(brief(parseFindings(text, { worktree: WT, files: DEMO }))).toEqual([
      { path: 'src/core/lamp.js', line: 3, message: 'possible secret: password=[redacted]' },
    ]);
  });

  it('output that names no repository file gives nothing (the caller raises one alert for the patrol)', () => {
    expect(parseFindings('npm ERR! Missing script: "lint"\n', { worktree: WT, files: DEMO })).toEqual([]);
  });
});
