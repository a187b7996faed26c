import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_ALERT_EXCERPT_CHARS, PATROL_KIND_LABELS, type PatrolSpec, type RunnerEventBody, WIRE_LIMITS } from '../../protocol';
import { bashQuote } from '../pty/clean-env';
import { OutputTail } from '../pty/output-tail';
import { parseTestCounts, stripAnsi, type TestCounts } from '../hooks/test-counts';
import { git } from '../workspace/git';
import { parseFindings, type Finding } from './findings';

/**
 * One patrol inside a session: how its command is launched (non-interactive bash in the worktree
 * root, with `av-check` on PATH), what of its output is kept, and the structured result it ends
 * with: one ALERT_RAISED per file the failure points to, TEST_RUN_FINISHED for test patrols, then
 * PATROL_FINISHED. The session streams the terminal and meters it like any other.
 */

/** Output kept for parsing: the tail, where test runners and compilers print their summaries. */
export const PATROL_OUTPUT_KEEP_CHARS = 1024 * 1024;
/** Lines of the log an alert gets when the output names no file of the repository. */
const FALLBACK_EXCERPT_LINES = 30;

const CHECK_CLI = fileURLToPath(new URL('./checks/cli.ts', import.meta.url));

/** tsx's loader, so `av-check` runs the TypeScript checks with the runner's own node. */
function tsxLoader(): string {
  return import.meta.resolve('tsx');
}

/** The `av-check` wrapper a patrol finds first on its PATH. */
export function renderAvCheck(nodePath = process.execPath, loader = tsxLoader(), cli = CHECK_CLI): string {
  return ['#!/bin/sh', '# Agent Village: the runner’s offline patrol checks (deps, secrets).', `exec ${bashQuote(nodePath)} --import ${bashQuote(loader)} ${bashQuote(cli)} "$@"`, ''].join('\n');
}

export interface PatrolLaunch {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/** Writes `<home>/bin/av-check` and returns how to run the command: `bash -c`, no rc files, no terminal input. */
export async function preparePatrolLaunch(spec: PatrolSpec, home: string, env: Record<string, string>, bash = '/bin/bash'): Promise<PatrolLaunch> {
  const bin = path.join(home, 'bin');
  await fs.promises.mkdir(bin, { recursive: true });
  await fs.promises.writeFile(path.join(bin, 'av-check'), renderAvCheck(), { mode: 0o755 });
  // Tools read CI to stay non-interactive and skip spinners; colours stay on (the terminal shows them).
  return { file: bash, args: ['--noprofile', '--norc', '-c', spec.command], env: { ...env, PATH: `${bin}:${env.PATH}`, CI: 'true', SHELL: bash } };
}

/** What a patrol printed, its tail kept for the findings. */
export class PatrolOutput extends OutputTail {
  constructor() {
    super(PATROL_OUTPUT_KEEP_CHARS);
  }
}

export interface PatrolOutcome {
  /** How the command ended: an exit code, or why it did not finish. */
  exitCode: number | null;
  signal: string | null;
  /** Set when the runner stopped it (timeout, stop request): the run is an error, not a failure. */
  stoppedBecause: string | null;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function tailLines(text: string, n: number): string {
  const lines = stripAnsi(text).replace(/\r\n?/g, '\n').split('\n');
  while (lines.length && lines.at(-1)!.trim() === '') lines.pop();
  return lines.slice(-n).join('\n').slice(-MAX_ALERT_EXCERPT_CHARS);
}

/** The events that end a patrol whose command ran (in order), built from its output and worktree. */
export async function patrolResultEvents(
  spec: PatrolSpec,
  outcome: PatrolOutcome,
  output: string,
  worktree: { path: string; sha: string },
  startedAt: number,
): Promise<RunnerEventBody[]> {
  const label = PATROL_KIND_LABELS[spec.kind];
  const events: RunnerEventBody[] = [];
  const counts: TestCounts | null = spec.kind === 'test' ? parseTestCounts(output) : null;
  if (spec.kind === 'test') {
    events.push({ type: 'TEST_RUN_FINISHED', command: spec.command.slice(0, WIRE_LIMITS.COMMAND), passed: counts?.passed ?? 0, failed: counts?.failed ?? 0, exit_code: outcome.exitCode });
  }
  const status = outcome.stoppedBecause ? 'error' : outcome.exitCode === 0 && !outcome.signal ? 'passed' : 'failed';
  let findings: Finding[] = [];
  if (status === 'failed') {
    const listing = await git(['ls-files', '-z'], { cwd: worktree.path, what: 'ls-files' }).catch(() => '');
    findings = parseFindings(output, { worktree: worktree.path, files: new Set(listing.split('\0').filter(Boolean)) });
    if (!findings.length) {
      const how = outcome.signal ? `killed by ${outcome.signal}` : `exit ${outcome.exitCode}`;
      findings = [{ path: null, line: null, message: `${label} failed (${how}); the output names no file of the repository`, excerpt: tailLines(output, FALLBACK_EXCERPT_LINES), count: 1 }];
    }
  }
  // Paths in the log point into this run's worktree, which is gone by the time anyone reads them.
  const relative = (text: string) => text.split(`file://${worktree.path}/`).join('').split(`${worktree.path}/`).join('');
  for (const f of findings) {
    const dir = f.path ? path.posix.dirname(f.path) : '';
    events.push({
      type: 'ALERT_RAISED',
      severity: 'error',
      message: (f.path ? `${label}: ${f.path}${f.line ? `:${f.line}` : ''} — ${f.message}` : f.message).slice(0, WIRE_LIMITS.MESSAGE),
      room_path: dir === '.' ? '' : dir,
      patrol_id: spec.patrol_id,
      ...(f.path ? { path: f.path } : {}),
      ...(f.line ? { line: f.line } : {}),
      excerpt: relative(f.excerpt).slice(0, MAX_ALERT_EXCERPT_CHARS),
      fingerprint: `${spec.kind}:${f.path ?? '*'}`,
    });
  }
  const how = outcome.signal ? `killed by ${outcome.signal}` : `exit ${outcome.exitCode}`;
  const testPart = counts ? `; ${counts.passed} passed, ${counts.failed} failed` : '';
  const summary =
    status === 'error'
      ? `${label} did not finish: ${outcome.stoppedBecause}`
      : status === 'passed'
        ? `${label} passed (${how}${testPart})`
        : `${label} failed (${how}${testPart}); ${plural(findings.length, 'alert')}`;
  events.push({
    type: 'PATROL_FINISHED',
    patrol_id: spec.patrol_id,
    run_id: spec.run_id,
    kind: spec.kind,
    status,
    exit_code: outcome.exitCode,
    summary: summary.slice(0, WIRE_LIMITS.TEXT),
    commit_sha: worktree.sha,
    tests: counts,
    findings: findings.length,
    duration_ms: Math.max(0, Date.now() - startedAt),
  });
  return events;
}

/** A patrol that never ran its command (no worktree, stopped before start): an error, no alerts. */
export function patrolErrorEvent(spec: PatrolSpec, reason: string, sha: string | null, startedAt: number): RunnerEventBody {
  return {
    type: 'PATROL_FINISHED',
    patrol_id: spec.patrol_id,
    run_id: spec.run_id,
    kind: spec.kind,
    status: 'error',
    exit_code: null,
    summary: `${PATROL_KIND_LABELS[spec.kind]} could not run: ${reason}`.slice(0, WIRE_LIMITS.TEXT),
    commit_sha: sha,
    tests: null,
    findings: 0,
    duration_ms: Math.max(0, Date.now() - startedAt),
  };
}
