import { describe, expect, it } from 'vitest';
import { bubbleFor, spawnsSprite, statusText } from './status';

describe('sprite status', () => {
  it('maps states and reasons to bubbles', () => {
    expect(bubbleFor({ state: 'WAITING_FOR_APPROVAL', reason: 'merge to main' })).toBe('approval');
    expect(bubbleFor({ state: 'PAUSED_BY_HUMAN', reason: 'paused by ann' })).toBe('idle');
    expect(bubbleFor({ state: 'FAILED', reason: 'exit 1' })).toBe('failed');
    expect(bubbleFor({ state: 'RUNNING', reason: '', activity: 'waiting_for_input' })).toBe('input');
    expect(bubbleFor({ state: 'RUNNING', reason: '', activity: 'idle' })).toBe('idle');
    expect(bubbleFor({ state: 'RUNNING', reason: 'waiting for input', activity: 'working' })).toBeNull();
    expect(bubbleFor({ state: 'RUNNING', reason: 'editing src/a.ts' })).toBeNull();
    expect(bubbleFor({ state: 'PREPARING_WORKSPACE', reason: '' })).toBe('starting');
    expect(bubbleFor({ state: 'COMPLETED', reason: '' })).toBeNull();
  });

  it('gives readable status text', () => {
    expect(statusText({ state: 'RUNNING', reason: '', activity: 'idle', activitySince: 1_000 }, 1_000 + 5 * 60_000)).toBe('idle for 5 min');
    expect(statusText({ state: 'WAITING_FOR_APPROVAL', reason: '' })).toBe('waiting for approval');
    expect(statusText({ state: 'RUNNING', reason: 'editing' })).toBe('working');
  });

  it('names the gate an agent CLI waits at, instead of a plain "waiting for input"', () => {
    expect(statusText({ state: 'RUNNING', reason: '', activity: 'waiting_for_input', activityDetail: 'needs sign-in: codex' })).toBe('needs sign-in: codex');
    expect(statusText({ state: 'RUNNING', reason: '', activity: 'waiting_for_input', activityDetail: 'waiting for your answer: Trust this folder?' })).toBe('waiting for your answer: Trust this folder?');
    expect(statusText({ state: 'RUNNING', reason: '', activity: 'waiting_for_input', activityDetail: 'turn ended: done' })).toBe('waiting for input');
  });

  it('never walks ended sessions in', () => {
    expect(spawnsSprite({ state: 'RUNNING' })).toBe(true);
    expect(spawnsSprite({ state: 'COMPLETED' })).toBe(false);
    expect(spawnsSprite({ state: 'FAILED' })).toBe(false);
  });
});
