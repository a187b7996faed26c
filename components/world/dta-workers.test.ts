import { describe, expect, it } from 'vitest';
import type { DtaRunSummary } from '../../protocol';
import { commonRoom, dtaRoom, dtaRunAsSession, isDtaWorker } from './dta-workers';
import { bubbleFor, spawnsSprite } from './status';

const run = (over: Partial<DtaRunSummary> = {}): DtaRunSummary => ({
  id: 'dta_abcdef01',
  repo_id: 'repo_1',
  runner_id: 'rnr_1',
  tool: 'link_updater',
  status: 'proposing',
  reason: 'Discovering and proposing on branch dta/dta_abcdef01.',
  branch: 'dta/dta_abcdef01',
  invocation: { tool: 'link_updater', glob: 'site/docs/**/*.html', params: {} },
  gate_required: true,
  approval_id: null,
  output: null,
  patch: null,
  commit_sha: null,
  files: [],
  created_by: 'ann',
  created_at: '2026-11-26T10:00:00.000Z',
  ended_at: null,
  passed: false,
  ...over,
});

describe('a DTA run as a village worker', () => {
  it('stands in the room of the files it touches: the deepest common directory, else where its glob points', () => {
    expect(commonRoom(['site/a/x.html', 'site/a/b/y.html'])).toBe('site/a');
    expect(commonRoom(['site/a/x.html', 'docs/y.md'])).toBe('');
    expect(commonRoom(['README.md'])).toBe('');
    expect(dtaRoom(run())).toBe('site/docs');
    expect(dtaRoom(run({ invocation: { tool: 'link_updater', params: {} } }))).toBe('');
    expect(dtaRoom(run({ files: ['site/blog/2026/a.html', 'site/blog/b.html'] }))).toBe('site/blog');
  });

  it('its phase is on its label, and the state gives the usual bubble: the hand at the gate, a cross on failure; it leaves when done', () => {
    const s = dtaRunAsSession(run());
    expect(s).toMatchObject({ id: 'dta_abcdef01', repo_id: 'repo_1', title: 'link_updater · measuring', state: 'RUNNING' });
    expect(isDtaWorker(s.id)).toBe(true);
    expect(isDtaWorker('run_abcdef')).toBe(false);
    const gate = dtaRunAsSession(run({ status: 'waiting_for_approval' }));
    expect(gate.title).toBe('link_updater · waiting for approval');
    expect(bubbleFor(gate)).toBe('approval');
    expect(bubbleFor(dtaRunAsSession(run({ status: 'waiting_for_lock' })))).toBe('idle');
    expect(bubbleFor(dtaRunAsSession(run({ status: 'failed' })))).toBe('failed');
    // A run that ended before the page opened never spawns a sprite.
    expect(spawnsSprite(dtaRunAsSession(run({ status: 'verified' })))).toBe(false);
    expect(spawnsSprite(dtaRunAsSession(run({ status: 'queued' })))).toBe(true);
  });
});
