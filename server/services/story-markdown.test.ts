import { describe, expect, it } from 'vitest';
import type { SessionStory } from '../../protocol';
import { storyMarkdown } from './story-markdown';
import { walkOf } from './stories';

const story: SessionStory = {
  session: {
    id: 'sess_abcdef', repo_id: 'repo_abcdef', runner_id: null, provider: 'claude', kind: 'agent', room_path: 'src/core', title: 'Lamp note',
    state: 'COMPLETED', reason: 'process exited with code 0', created_by: 'Ada', created_at: '2026-11-26T10:00:00.000Z', last_seq: 40, mode: 'write',
    activity: null, activity_detail: '', activity_since: null, diff: null, tests: null, runner_lost: false,
  },
  repo: { id: 'repo_abcdef', name: 'lamplighter' },
  ended_at: '2026-11-26T10:02:05.000Z',
  duration_ms: 125_000,
  rooms: ['src', 'src/core', 'docs'],
  files: [{ path: 'src/core/lamp.js', added: 2, removed: 0 }, { path: 'logo.png', added: null, removed: null }],
  patch: 'diff --git a/src/core/lamp.js b/src/core/lamp.js\n+// ```not a fence```\n',
  tests: [{ command: 'npm test', passed: 7, failed: 1, exit_code: 1, ts: 0 }],
  approvals: [{ id: 'ap1', category: 'merge', summary: 'merge into protected branch main', risk: 'high', requested_at: '', state: 'allowed', decided_by: 'Otto', decided_at: '', note: 'ok' }],
  redactions: [{ source: 'runner', rule: 'github-token', secret_name: null, count: 2, first_seq: 3, last_seq: 9 }],
  agent_minutes: 1.5,
};

describe('storyMarkdown', () => {
  it('writes every part of the story, with a fence longer than any backtick run in the diff', () => {
    const md = storyMarkdown(story, 'http://x/sessions/sess_abcdef');
    expect(md).toContain('## Session story: Lamp note');
    expect(md).toContain('**Duration:** 2 min 5 s');
    expect(md).toContain('**Rooms visited:** src/ → src/core/ → docs/');
    expect(md).toContain('- `src/core/lamp.js` +2 −0');
    expect(md).toContain('- `logo.png` +binary −binary');
    expect(md).toContain('````diff\ndiff --git');
    expect(md).toContain('- `npm test`: 7 passed, 1 failed (exit 1)');
    expect(md).toContain('- merge: merge into protected branch main — **allowed** by Otto (“ok”)');
    expect(md).toContain('- github-token × 2 (runner)');
    expect(md).toContain('**Agent-minutes:** 1.5');
    expect(md).toContain('http://x/sessions/sess_abcdef');
  });

  it('says so when nothing happened', () => {
    const md = storyMarkdown({ ...story, files: [], patch: null, tests: [], approvals: [], redactions: [] });
    expect(md).toContain('No files changed.');
    expect(md).toContain('No test runs.');
    expect(md).toContain('No approvals asked.');
    expect(md).toContain('None.');
  });
});

describe('walkOf', () => {
  it('folds consecutive repeats but keeps returns', () => {
    expect(walkOf('src', ['src', 'src/core', 'src/core', 'docs', 'src/core'])).toEqual(['src', 'src/core', 'docs', 'src/core']);
    expect(walkOf('', [])).toEqual(['']);
  });
});
