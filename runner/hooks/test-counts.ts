/**
 * Test commands and their results, recognised from a command line and the text a test runner
 * printed. Pure functions: the hook bridge feeds them Bash tool output (agents) or terminal output
 * (a person in a shell session).
 */

export interface TestCounts {
  passed: number;
  failed: number;
}

/** CSI/OSC escape sequences and lone ESC-x pairs: colours and cursor moves, never text. */
const ANSI_PATTERN = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, '');
}

const num = (s: string | undefined): number => (s ? Number.parseInt(s, 10) : 0);

/** Every match of a global pattern; the last one is the final summary when a runner prints several. */
function lastMatch(text: string, pattern: RegExp): RegExpExecArray | null {
  let last: RegExpExecArray | null = null;
  for (const m of text.matchAll(pattern)) last = m as RegExpExecArray;
  return last;
}

/** `key N` pairs inside one summary line ("3 passed, 1 failed, 2 skipped"). */
function countsIn(line: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of line.matchAll(/(\d+)\s+([a-z]+)/gi)) out.set(m[2].toLowerCase(), num(m[1]));
  return out;
}

type Parser = (text: string) => TestCounts | null;

/** vitest: " Tests  1 failed | 3 passed (4)" (the "Test Files" line counts files, not tests). */
const vitest: Parser = (text) => {
  const m = lastMatch(text, /^\s*Tests\s{1,}(\d+ [a-z]+(?:\s*\|\s*\d+ [a-z]+)*)\s*\(\d+\)\s*$/gm);
  if (!m) return null;
  const c = countsIn(m[1]);
  return { passed: c.get('passed') ?? 0, failed: c.get('failed') ?? 0 };
};

/** jest: "Tests:       1 failed, 3 passed, 4 total". */
const jest: Parser = (text) => {
  const m = lastMatch(text, /^\s*Tests:\s+(.*\d+ total)\s*$/gm);
  if (!m) return null;
  const c = countsIn(m[1]);
  return { passed: c.get('passed') ?? 0, failed: c.get('failed') ?? 0 };
};

/** node --test: TAP "# pass 7" / "# fail 0", or the spec reporter's "ℹ pass 7" / "ℹ fail 0". */
const nodeTest: Parser = (text) => {
  const pass = lastMatch(text, /^\s*(?:#|ℹ)\s*pass\s+(\d+)\s*$/gm);
  const failed = lastMatch(text, /^\s*(?:#|ℹ)\s*fail\s+(\d+)\s*$/gm);
  if (!pass && !failed) return null;
  return { passed: num(pass?.[1]), failed: num(failed?.[1]) };
};

/** pytest: "==== 1 failed, 3 passed, 2 warnings in 0.53s ====" or "3 passed in 0.46s"; errors count as failures. */
const pytest: Parser = (text) => {
  const m = lastMatch(text, /^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun)(?:, )?)+) in [\d.]+s(?: \([^)]*\))?\s*=*\s*$/gm);
  if (!m) return null;
  const c = countsIn(m[1]);
  return { passed: c.get('passed') ?? 0, failed: (c.get('failed') ?? 0) + (c.get('error') ?? 0) + (c.get('errors') ?? 0) };
};

/** mocha: "  3 passing (12ms)" and "  1 failing". */
const mocha: Parser = (text) => {
  const pass = lastMatch(text, /^\s*(\d+) passing\b/gm);
  const failed = lastMatch(text, /^\s*(\d+) failing\b/gm);
  if (!pass && !failed) return null;
  return { passed: num(pass?.[1]), failed: num(failed?.[1]) };
};

/** Most specific formats first: jest's "Tests:" line must not be read as vitest's, and so on. */
const PARSERS: Parser[] = [jest, vitest, pytest, nodeTest, mocha];

/** Pass/fail counts from a test runner's output, or null when no known summary is in it. */
export function parseTestCounts(output: string): TestCounts | null {
  const text = stripAnsi(output).replace(/\r/g, '');
  for (const p of PARSERS) {
    const counts = p(text);
    if (counts) return counts;
  }
  return null;
}

/**
 * Whether a command line runs tests: npm/yarn/pnpm/bun test, npx/pnpm exec vitest|jest|mocha,
 * vitest, jest, mocha, pytest, python -m pytest, node --test. Looks at every `&&`/`;`/`|`-separated
 * part, so `cd app && npm test` counts.
 */
export function isTestCommand(commandLine: string): boolean {
  return commandLine
    .split(/&&|\|\||;|\||\n/)
    .map((part) => part.trim().replace(/^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+/, ''))
    .some((part) => TEST_COMMAND_PATTERNS.some((p) => p.test(part)));
}

const TEST_COMMAND_PATTERNS: RegExp[] = [
  /^(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test(?::\S+)?(?:\s|$)/,
  /^npm\s+t(?:\s|$)/,
  /^(?:npx|pnpm\s+exec|pnpm\s+dlx|yarn\s+exec|bunx)\s+(?:vitest|jest|mocha)(?:\s|$)/,
  /^(?:\S*\/)?(?:vitest|jest|mocha|pytest)(?:\s|$)/,
  /^python3?\s+-m\s+pytest(?:\s|$)/,
  /^node\s+(?:\S+\s+)*--test(?:\s|$|=)/,
];
