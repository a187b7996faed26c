import { describe, expect, it } from 'vitest';
import {
  AddRepoBodySchema,
  canTransition,
  CreateSessionCommandSchema,
  parseInput,
  RoomPathSchema,
  RunnerEventBatchSchema,
  RunnerEventSchema,
} from './index';

const base = {
  session_id: 'sess_abcdefgh',
  org_id: 'org_abc',
  repo_id: 'repo_abcdefgh',
  repo_ref: { provider: 'local', owner: '', name: 'demo' },
  ts: 1730000000000,
  seq: 1,
};

describe('runner events', () => {
  it('accepts the §7 examples with our required fields', () => {
    expect(RunnerEventSchema.safeParse({ ...base, type: 'TERMINAL_CHUNK', data: 'hi' }).success).toBe(true);
    expect(
      RunnerEventSchema.safeParse({ ...base, type: 'FILE_TOUCHED', path: 'src/a.ts', room_path: 'src', reason: 'write' }).success,
    ).toBe(true);
    expect(
      RunnerEventSchema.safeParse({
        ...base,
        type: 'USAGE_TICK',
        provider: 'shell',
        window_start: 1730000000000,
        units: { agent_seconds: 30, terminal_kb: 12, files_touched: 3 },
      }).success,
    ).toBe(true);
  });

  it('rejects unknown types, missing seq, zero seq and bad ids with a readable message', () => {
    expect(RunnerEventSchema.safeParse({ ...base, type: 'NOPE' }).success).toBe(false);
    const { seq: _seq, ...noSeq } = base;
    expect(RunnerEventSchema.safeParse({ ...noSeq, type: 'TERMINAL_CHUNK', data: '' }).success).toBe(false);
    expect(RunnerEventSchema.safeParse({ ...base, seq: 0, type: 'TERMINAL_CHUNK', data: '' }).success).toBe(false);
    const r = parseInput(RunnerEventSchema, { ...base, session_id: 'x', type: 'TERMINAL_CHUNK', data: '' });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('BAD_REQUEST');
      expect(r.error.message).toContain('session_id');
    }
  });

  it('batches are bounded and never empty', () => {
    expect(RunnerEventBatchSchema.safeParse([]).success).toBe(false);
    expect(RunnerEventBatchSchema.safeParse('nope').success).toBe(false);
    expect(RunnerEventBatchSchema.safeParse([{ ...base, type: 'TERMINAL_CHUNK', data: 'x' }]).success).toBe(true);
  });
});

describe('room paths', () => {
  it.each(['', 'src', 'src/core', 'a b/c'])('accepts %j', (p) => expect(RoomPathSchema.safeParse(p).success).toBe(true));
  it.each(['/etc', '../x', 'a/../b', 'a//b', 'a/', './a'])('rejects %j', (p) => expect(RoomPathSchema.safeParse(p).success).toBe(false));
});

describe('session states', () => {
  it('only move forward, with the running loops of §6', () => {
    expect(canTransition('CREATED', 'PREPARING_WORKSPACE')).toBe(true);
    expect(canTransition('RUNNING', 'PAUSED_BY_HUMAN')).toBe(true);
    expect(canTransition('PAUSED_BY_HUMAN', 'RUNNING')).toBe(true);
    expect(canTransition('RUNNING', 'CREATED')).toBe(false);
    expect(canTransition('COMPLETED', 'RUNNING')).toBe(false);
    expect(canTransition('FAILED', 'COMPLETED')).toBe(false);
  });
});

describe('commands and bodies', () => {
  it('fills create defaults and refuses a room outside the repository', () => {
    const cmd = {
      session_id: 'sess_abcdefgh',
      org_id: 'org_abc',
      repo_id: 'repo_abcdefgh',
      repo: { provider: 'local', owner: '', name: 'demo' },
      repo_source: '/tmp/demo',
      checkout: { type: 'branch', ref: 'main' },
      room_path: 'src',
      provider: 'shell',
      task: { title: 't' },
    };
    const parsed = CreateSessionCommandSchema.parse(cmd);
    expect(parsed.mode).toBe('write');
    expect(parsed.cols).toBe(120);
    expect(CreateSessionCommandSchema.safeParse({ ...cmd, room_path: '../../etc' }).success).toBe(false);
    expect(CreateSessionCommandSchema.safeParse({ ...cmd, provider: 'bogus' }).success).toBe(false);
  });

  it('accepts local paths and git URLs as repository sources, and nothing else', () => {
    for (const s of ['/home/me/repo', 'https://github.com/o/r.git', 'git@github.com:o/r.git', 'ssh://git@host/o/r']) {
      expect(AddRepoBodySchema.safeParse({ source: s }).success).toBe(true);
    }
    for (const s of ['', 'relative/path', 'ftp://x/y', '; rm -rf /']) {
      expect(AddRepoBodySchema.safeParse({ source: s }).success).toBe(false);
    }
  });
});

describe('patrol messages', () => {
  const finished = {
    ...base,
    type: 'PATROL_FINISHED',
    patrol_id: 'patrol_1',
    run_id: 'prun_1',
    kind: 'test',
    status: 'failed',
    exit_code: 1,
    summary: 'Tests failed',
    commit_sha: 'abcdef1234',
    tests: { passed: 7, failed: 1 },
    findings: 1,
    duration_ms: 1200,
  };
  it('PATROL_FINISHED and a patrol’s ALERT_RAISED validate; bad kinds, statuses and shas do not', () => {
    expect(RunnerEventSchema.safeParse(finished).success).toBe(true);
    expect(RunnerEventSchema.safeParse({ ...finished, commit_sha: null, status: 'error', tests: null }).success).toBe(true);
    expect(RunnerEventSchema.safeParse({ ...finished, kind: 'fuzz' }).success).toBe(false);
    expect(RunnerEventSchema.safeParse({ ...finished, status: 'skipped' }).success).toBe(false);
    expect(RunnerEventSchema.safeParse({ ...finished, commit_sha: 'main' }).success).toBe(false);
    const alert = { ...base, type: 'ALERT_RAISED', severity: 'error', message: 'x', room_path: 'tests/core', patrol_id: 'patrol_1', path: 'tests/core/a.js', line: 3, excerpt: 'log', fingerprint: 'test:tests/core/a.js' };
    expect(RunnerEventSchema.safeParse(alert).success).toBe(true);
    expect(RunnerEventSchema.safeParse({ ...alert, room_path: '../etc' }).success).toBe(false);
    expect(RunnerEventSchema.safeParse({ ...alert, line: 0 }).success).toBe(false);
  });

  it('a create command may carry a patrol; its command and kind are checked', () => {
    const cmd = {
      session_id: 'sess_abcdefgh',
      org_id: 'org_abc',
      repo_id: 'repo_abcdefgh',
      repo: { provider: 'local', owner: '', name: 'demo' },
      repo_source: '/srv/demo',
      checkout: { type: 'branch', ref: 'main' },
      room_path: '',
      provider: 'shell',
      task: { title: 'Tests patrol' },
      mode: 'read_only',
    };
    const parsed = CreateSessionCommandSchema.parse({ ...cmd, patrol: { patrol_id: 'patrol_1', run_id: 'prun_1', kind: 'test', command: 'npm test' } });
    expect(parsed.patrol?.timeout_ms).toBe(15 * 60_000);
    expect(CreateSessionCommandSchema.safeParse({ ...cmd, patrol: { patrol_id: 'p', run_id: 'r', kind: 'test', command: '   ' } }).success).toBe(false);
    expect(CreateSessionCommandSchema.safeParse({ ...cmd, patrol: { patrol_id: 'p', run_id: 'r', kind: 'deploy', command: 'x' } }).success).toBe(false);
  });
});
