import { describe, expect, it } from 'vitest';
import { canTransition, SessionStateSchema, statesBefore } from '../../protocol';
import { foldStateChanges } from './session-state';

const at = 1_700_000_000_000;

describe('the server-side lifecycle check', () => {
  it('statesBefore is exactly the states canTransition allows from', () => {
    for (const to of SessionStateSchema.options) {
      expect(statesBefore(to).sort()).toEqual(SessionStateSchema.options.filter((from) => canTransition(from, to)).sort());
    }
    expect(statesBefore('CREATED')).toEqual([]);
  });

  it('applies a batch of legal changes in order; the terminal one sets endedAt', () => {
    const r = foldStateChanges('CREATED', [
      { to: 'PREPARING_WORKSPACE', reason: 'a', at },
      { to: 'STARTING_PROVIDER', reason: 'b', at },
      { to: 'RUNNING', reason: 'c', at },
      { to: 'COMPLETED', reason: 'exited with code 0', at: at + 5 },
    ]);
    expect(r.refused).toEqual([]);
    expect(r.next).toEqual({ state: 'COMPLETED', reason: 'exited with code 0', endedAt: new Date(at + 5) });
  });

  it('refuses what the table forbids (a late end after FAILED, a way back) and treats a repeat as nothing', () => {
    const late = foldStateChanges('FAILED', [
      { to: 'STOPPING', reason: 'stop', at },
      { to: 'COMPLETED', reason: 'exited', at },
    ]);
    expect(late.next).toBeNull();
    expect(late.refused).toEqual([
      { from: 'FAILED', to: 'STOPPING', reason: 'stop' },
      { from: 'FAILED', to: 'COMPLETED', reason: 'exited' },
    ]);
    expect(foldStateChanges('RUNNING', [{ to: 'RUNNING', reason: 'resent', at }])).toEqual({ next: null, refused: [] });
    expect(foldStateChanges('STOPPING', [{ to: 'RUNNING', reason: 'back', at }]).refused).toHaveLength(1);
    // RUNNING ⇄ PAUSED_BY_HUMAN is the one kind of loop.
    expect(foldStateChanges('RUNNING', [{ to: 'PAUSED_BY_HUMAN', reason: 'p', at }, { to: 'RUNNING', reason: 'r', at }]).next?.state).toBe('RUNNING');
  });
});
