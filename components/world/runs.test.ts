import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../protocol';
import { layoutVillage, roomFor, routeTo, WORKSHOP_ID } from './layout';
import { runAsSession } from './runs';
import { bubbleFor, spawnsSprite } from './status';

const run = (status: RunSummary['status']): RunSummary => ({
  id: 'run_abcdef',
  agent_name: 'echo-json',
  runner_id: 'runner_1',
  runner_name: 'attached',
  status,
  reason: '',
  command: 'x',
  parameters: {},
  parent_session_id: null,
  created_by: 'Ada',
  created_at: '2026-01-01T00:00:00.000Z',
  started_at: null,
  ended_at: null,
  result_type: null,
  result_text: null,
  result_data: null,
  exit_code: null,
  stderr: '',
  stdout_truncated: false,
  timed_out: false,
  callback: { state: 'none', detail: '' },
});

describe('the workshop', () => {
  const repos = [{ id: 'repo_aaaaaa1', name: 'app', tree: { default_branch: 'main', head_sha: 'abcdef1', dirs: [{ path: '', files: 1 }, { path: 'src', files: 2 }], truncated: false } }];

  it('is a building of its own, first by the road, only when there are deterministic agents', () => {
    expect(layoutVillage(repos).buildings.map((b) => b.kind)).toEqual(['building']);
    const l = layoutVillage(repos, { agents: 3 });
    expect(l.buildings.map((b) => [b.kind, b.repoId])).toEqual([
      ['workshop', WORKSHOP_ID],
      ['building', 'repo_aaaaaa1'],
    ]);
    expect(l.buildings[0]!.agents).toBe(3);
    // Pure: the same input lays out the same village.
    expect(layoutVillage(repos, { agents: 3 })).toEqual(l);
    // More agents, more benches (wider), within limits.
    expect(layoutVillage(repos, { agents: 9 }).buildings[0]!.w).toBeGreaterThan(l.buildings[0]!.w);
    expect(layoutVillage(repos, { agents: 500 }).buildings[0]!.w).toBeLessThanOrEqual(22);
  });

  it('workers walk from its door to spots on its floor', () => {
    const l = layoutVillage(repos, { agents: 2 });
    const b = l.buildings[0]!;
    const room = roomFor(l, WORKSHOP_ID, '')!;
    expect(room.spots.length).toBeGreaterThanOrEqual(4);
    for (let i = 0; i < 6; i++) {
      const route = routeTo(l, room, i);
      expect(route[0]).toEqual(b.entrance);
      const end = route.at(-1)!;
      expect(end.x).toBeGreaterThan(b.x);
      expect(end.x).toBeLessThan(b.x + b.w - 1);
      expect(end.y).toBeGreaterThan(b.y);
      expect(end.y).toBeLessThan(b.y + b.h - 1);
    }
  });

  it('shows a run as a worker: queued starts, running works, failed gets a cross, completed leaves', () => {
    expect(runAsSession(run('queued'))).toMatchObject({ repo_id: WORKSHOP_ID, state: 'CREATED', title: 'echo-json (run)' });
    expect(bubbleFor(runAsSession(run('queued')))).toBe('starting');
    expect(bubbleFor(runAsSession(run('running')))).toBeNull();
    expect(bubbleFor(runAsSession(run('failed')))).toBe('failed');
    expect(spawnsSprite(runAsSession(run('completed')))).toBe(false);
  });
});
