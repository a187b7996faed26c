import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CreateSessionCommand, RunnerEvent } from '../../protocol';
import { CreateSessionCommandSchema } from '../../protocol';
import type { Logger } from '../log';
import { errorText } from '../../common/error-text';

/** Helpers shared by the runner's tests (not a test file itself). */

export async function makeTempDir(prefix: string): Promise<string> {
  return fs.promises.mkdtemp(path.join(os.tmpdir(), `${prefix}-`));
}

/** Removes a temp dir even when a test left read-only files in it. */
export async function removeTempDir(dir: string): Promise<void> {
  try {
    execFileSync('chmod', ['-R', 'u+w', dir], { stdio: 'ignore' });
  } catch {
    // Nothing read-only, or already gone.
  }
  await fs.promises.rm(dir, { recursive: true, force: true });
}

export function gitIn(cwd: string, args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
  });
}

/** The files of the sample repository; the scan test counts on exactly these. */
export const SAMPLE_FILES: Record<string, string> = {
  'README.md': '# sample\n',
  'package.json': '{}\n',
  'src/index.ts': 'export {};\n',
  'src/util.ts': 'export {};\n',
  'src/lib/deep/x.ts': 'export {};\n',
  'docs/guide.md': 'guide\n',
};

/** A real git repository with one commit on `main`. */
export function makeSampleRepo(dir: string, files: Record<string, string> = SAMPLE_FILES): string {
  fs.mkdirSync(dir, { recursive: true });
  gitIn(dir, ['init', '-q', '-b', 'main']);
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  gitIn(dir, ['add', '-A']);
  gitIn(dir, ['commit', '-q', '-m', 'initial']);
  return dir;
}

export function captureLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => void lines.push(`info ${m}`),
    warn: (m) => void lines.push(`warn ${m}`),
    error: (m, d) => void lines.push(`error ${m}${d ? ` ${errorText(d)}` : ''}`),
  };
}

let counter = 0;
export function sessionId(): string {
  counter++;
  return `sess_test${process.pid}x${counter}x${Math.random().toString(36).slice(2, 8)}`;
}

export function createCommand(overrides: Partial<Record<keyof CreateSessionCommand, unknown>> & { repo_source: string }): CreateSessionCommand {
  return CreateSessionCommandSchema.parse({
    session_id: sessionId(),
    org_id: 'org_test',
    repo_id: 'repo_sample01',
    repo: { provider: 'local', owner: '', name: 'sample' },
    checkout: { type: 'branch', ref: 'main' },
    room_path: '',
    provider: 'shell',
    task: { title: 'test' },
    cols: 100,
    rows: 30,
    ...overrides,
  });
}

/** Concatenated terminal output of a session. */
export function outputOf(events: RunnerEvent[], sid: string): string {
  return events
    .filter((e) => e.session_id === sid && e.type === 'TERMINAL_CHUNK')
    .map((e) => (e.type === 'TERMINAL_CHUNK' ? e.data : ''))
    .join('');
}

/** Polls until `check` returns a truthy value; no assertion on how long it took. */
export async function waitFor<T>(check: () => T | undefined | null | false, what: string, timeoutMs = 10_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
