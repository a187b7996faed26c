import path from 'node:path';
import { MAX_ALERT_EXCERPT_CHARS, MAX_PATROL_FINDINGS } from '../../protocol';
import { stripAnsi } from '../hooks/test-counts';

/**
 * File paths out of test, lint and compiler output: which files a failing patrol points to, so
 * each failure becomes a bug sprite in the room of its file. Pure (the caller passes the text, the
 * worktree path and the repository's tracked files).
 *
 * Formats read (samples in findings.test.ts): node --test (spec and TAP), vitest, jest, mocha
 * stacks, ESLint's stylish and unix formats, tsc (plain and pretty), pytest, go test / go vet,
 * gcc/rustc-style `path:line:col: message`, and av-check's `path:line: message`.
 *
 * The model: output is a sequence of failure *blocks*, each opened by a headline (`✖ name`,
 * `not ok 3 - name`, ` FAIL  file > name`, `● name`, `--- FAIL: Test`, `FAILED …`); a block is
 * blamed on the first repository file it mentions (a stack's first frame in the repository is
 * where it failed). Lines that carry their own location and message (compilers, linters) are
 * findings by themselves. Findings are merged per file: one alert per file, listing every
 * failure seen there.
 */

export interface Finding {
  /** Relative to the repository root; null when the output names no file of the repository. */
  path: string | null;
  line: number | null;
  message: string;
  /** The lines of the output about it (ANSI stripped). */
  excerpt: string;
  /** How many failures were merged into it. */
  count: number;
}

/** Lines per block kept for an excerpt. */
const BLOCK_EXCERPT_LINES = 25;
const MESSAGE_MAX = 300;

const HEADLINE = /^\s*(?:✖|×|✗|✘|●|FAIL\b|FAILED\b|not ok\b|--- FAIL:|ERROR\b|\d+\) \S|_{3,} \S.* _{3,}$)/;
/** Lines that say where code ran, not what went wrong: stack frames, TAP locations. */
const FRAME = /^\s*(?:at\s|❯\s|→\s|›\s|test at\s|location:\s|File ")|\((?:file:\/\/)?[^()\s]+:\d+:\d+\)\s*$/;
const ERRORISH = /(?:Error\b|error\b|Exception\b|assert|expected|panic|failed|FAIL)/i;
/** Summary lines end a block (what follows is not about that failure). */
const SUMMARY = /^\s*(?:[#ℹ] (?:tests|pass|fail|suites|duration_ms)\b|Test Files\s|Tests:?\s|Test Suites:|Ran \d+ tests?|={3,}.*(?:passed|failed)|\d+ (?:passing|failing)\b|Found \d+ errors?)/;
/** pytest's progress line ("tests/test_x.py ..F.  [ 40%]"). */
const PROGRESS = /^\S+\s+[.FEsxX]+\s*\[\s*\d+%\]\s*$/;
/** ESLint stylish: "  12:5  error  message  rule-id". */
const ESLINT_MESSAGE = /^\s+(\d+):(\d+)\s+(error|warning)\s+(.+?)(?:\s{2,}(\S+))?\s*$/;
/** A path-like token with an optional location: file.ext:12:5, file.ext(12,5), "file.ext", line 12. */
const PATH_TOKEN = /(?:file:\/\/)?((?:\/|\.{1,2}\/)?[\w@~+.-]+(?:\/[\w@~+.-]+)*\.[A-Za-z][A-Za-z0-9]{0,9})(?::(\d+)(?::(\d+))?|\((\d+),(\d+)\)|", line (\d+))?/g;

function cleanTitle(line: string): string {
  return line
    .trim()
    .replace(/^(?:✖|×|✗|✘|●|FAILED|FAIL|not ok \d+ -|--- FAIL:|ERROR|\d+\))\s*/, '')
    .replace(/^_{3,} (.*?) _{3,}$/, '$1')
    .replace(/\s*\((?:\d+(?:\.\d+)?\s*m?s)\)\s*$/, '')
    .trim();
}

function clip(s: string, n = MESSAGE_MAX): string {
  const t = s.trim().replace(/\s+/g, ' ');
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

interface Ref {
  file: string;
  line: number | null;
  /** The matched text (path plus location). */
  token: string;
  /** What follows the location on the line. */
  rest: string;
}

interface Block {
  title: string;
  error: string | null;
  file: string | null;
  line: number | null;
  lines: string[];
}

export interface ParseOptions {
  /** Absolute path of the worktree the command ran in (absolute paths inside it become relative). */
  worktree: string;
  /** Tracked files of the repository, '/'-separated and relative. */
  files: ReadonlySet<string>;
}

/** Resolves a token to a tracked file: relative, absolute inside the worktree, or a unique suffix (go prints package-relative names). */
function makeResolver(opts: ParseOptions) {
  const root = opts.worktree.replace(/\/+$/, '');
  const bySuffix = new Map<string, string | null>();
  const suffixOf = (p: string): string | null => {
    if (bySuffix.has(p)) return bySuffix.get(p)!;
    let hit: string | null = null;
    for (const f of opts.files) {
      if (f.endsWith(`/${p}`)) {
        if (hit !== null) {
          hit = null;
          break;
        }
        hit = f;
      }
    }
    bySuffix.set(p, hit);
    return hit;
  };
  return (raw: string): string | null => {
    let p = raw;
    try {
      p = decodeURIComponent(p);
    } catch {
      // Not URI-encoded.
    }
    if (p.startsWith('/')) {
      if (!p.startsWith(`${root}/`)) return null;
      p = p.slice(root.length + 1);
    }
    p = path.posix.normalize(p).replace(/^(\.\/)+/, '');
    if (p.startsWith('../') || p.split('/').some((s) => s === 'node_modules' || s === '.git')) return null;
    if (opts.files.has(p)) return p;
    return suffixOf(p);
  };
}

function refsIn(line: string, resolve: (raw: string) => string | null): Ref[] {
  const out: Ref[] = [];
  for (const m of line.matchAll(PATH_TOKEN)) {
    const file = resolve(m[1]!);
    if (!file) continue;
    const n = m[2] ?? m[4] ?? m[6];
    const rest = line
      .slice(m.index! + m[0].length)
      .replace(/^["')]*/, '')
      .replace(/^[\s:-]+/, '')
      .trim();
    out.push({ file, line: n ? Number(n) : null, token: m[0], rest });
  }
  return out;
}

/** Every failure the output points to, one per file (capped at MAX_PATROL_FINDINGS). */
export function parseFindings(output: string, opts: ParseOptions): Finding[] {
  const resolve = makeResolver(opts);
  const text = stripAnsi(output).replace(/\r\n?/g, '\n');
  const byFile = new Map<string, Finding>();
  const add = (file: string, line: number | null, message: string, excerpt: string[]) => {
    const kept = excerpt.filter((l) => !/node:internal|node_modules|node:async_hooks/.test(l));
    const ex = kept.join('\n').trim();
    const f = byFile.get(file);
    if (f) {
      f.count++;
      if (f.line === null && line !== null) f.line = line;
      if (f.message === 'failure' && message) f.message = clip(message);
      if (ex && !f.excerpt.includes(ex) && f.excerpt.length < MAX_ALERT_EXCERPT_CHARS) f.excerpt = `${f.excerpt}\n\n${ex}`.slice(0, MAX_ALERT_EXCERPT_CHARS);
      return;
    }
    if (byFile.size >= MAX_PATROL_FINDINGS) return;
    byFile.set(file, { path: file, line, message: clip(message || 'failure'), excerpt: ex.slice(0, MAX_ALERT_EXCERPT_CHARS), count: 1 });
  };

  let block: Block | null = null;
  let lastError: string | null = null;
  let eslintFile: string | null = null;
  const close = () => {
    // " FAIL  file.test.js" alone says which file, not what failed: the blocks after it do.
    if (block?.file && !(block.error === null && block.title === block.file)) {
      const message = block.title ? (block.error ? `${block.title}: ${block.error}` : block.title) : (block.error ?? 'failure');
      add(block.file, block.line, message, block.lines);
    }
    block = null;
  };

  for (const line of text.split('\n')) {
    if (line.trim() === '') eslintFile = null;
    if (PROGRESS.test(line)) continue;
    if (SUMMARY.test(line)) {
      close();
      continue;
    }
    const eslint = eslintFile ? ESLINT_MESSAGE.exec(line) : null;
    if (eslint && eslintFile) {
      if (eslint[3] === 'error') add(eslintFile, Number(eslint[1]), `${eslint[4]}${eslint[5] ? ` (${eslint[5]})` : ''}`, [`${eslintFile}`, line]);
      continue;
    }
    const headline = HEADLINE.test(line);
    const refs = refsIn(line, resolve);
    if (headline) {
      close();
      const title = cleanTitle(line);
      // "✖ failing tests:" is a section heading, not a failure of its own.
      if (!(title.endsWith(':') && refs.length === 0)) block = { title: clip(title.replace(/\s*>\s*/g, ' > ')), error: null, file: null, line: null, lines: [] };
    }
    const b = block as Block | null;
    if (b && b.lines.length < BLOCK_EXCERPT_LINES) b.lines.push(line);
    const ref = refs[0];
    if (!ref) {
      // pytest echoes the failing source after ">"; its "E   …" lines are the error.
      if (!headline && ERRORISH.test(line) && !FRAME.test(line) && !/^\s*>/.test(line)) {
        const error = clip(line.replace(/^\s*E\s+/, ''));
        if (b && b.error === null) b.error = error;
        lastError = error;
      }
      continue;
    }
    if (line.trim() === ref.token) {
      eslintFile = ref.file; // ESLint stylish: the file's name on a line of its own
      continue;
    }
    const frame = FRAME.test(line);
    if (b && b.file === null) {
      b.file = ref.file;
      b.line = ref.line;
      if (!frame && !headline && ref.rest && b.error === null) b.error = clip(ref.rest);
    } else if (b && b.file === ref.file) {
      b.line ??= ref.line;
    } else if (!frame && ref.rest && !/^warning\b/i.test(ref.rest)) {
      // A compiler's or linter's own line; its warnings are not failures.
      add(ref.file, ref.line, ref.rest, [line]);
    } else if (!b && frame && lastError) {
      block = { title: lastError ?? '', error: null, file: ref.file, line: ref.line, lines: [line] };
    }
  }
  close();
  return [...byFile.values()];
}
