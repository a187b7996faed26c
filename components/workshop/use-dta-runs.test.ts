import { describe, expect, it } from 'vitest';
import { dtaRunUpdated, type DtaRunSummary } from '../../protocol';
import { mergeDtaRun } from './use-dta-runs';

const run = (over: Partial<DtaRunSummary> = {}): DtaRunSummary => ({
  id: 'dta_abcdef01',
  repo_id: 'repo_1',
  runner_id: 'rnr_1',
  tool: 'link_updater',
  status: 'proposing',
  reason: 'Discovering',
  branch: 'dta/dta_abcdef01',
  invocation: { tool: 'link_updater', params: {} },
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

describe('a pushed DTA run phase merged into the workshop list', () => {
  it('replaces the run in place, keeps the patch the list already has, and asks for the patch only when one appeared', () => {
    const list = [run({ id: 'dta_other001' }), run()];
    const proposed = mergeDtaRun(list, dtaRunUpdated(run({ status: 'waiting_for_approval', patch: 'diff --git a b' })));
    expect(proposed.needsPatch).toBe(true);
    expect(proposed.list!.map((r) => [r.id, r.status])).toEqual([['dta_other001', 'proposing'], ['dta_abcdef01', 'waiting_for_approval']]);
    const withPatch = proposed.list!.map((r) => (r.id === 'dta_abcdef01' ? { ...r, patch: 'diff --git a b' } : r));
    const verified = mergeDtaRun(withPatch, dtaRunUpdated(run({ status: 'verified', patch: 'diff --git a b', passed: true })));
    expect(verified.needsPatch).toBe(false);
    expect(verified.list![1]).toMatchObject({ status: 'verified', passed: true, patch: 'diff --git a b' });
  });

  it('a run the list has not seen goes first; no list yet: nothing to merge', () => {
    const m = mergeDtaRun([run()], dtaRunUpdated(run({ id: 'dta_new00001', status: 'queued' })));
    expect(m.list!.map((r) => r.id)).toEqual(['dta_new00001', 'dta_abcdef01']);
    expect(mergeDtaRun(undefined, dtaRunUpdated(run())).list).toBeUndefined();
  });
});
