import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeTempDir, removeTempDir } from '../testing/fixtures';
import { buildSessionEnv, renderBashrc } from './clean-env';
import { FlowControl } from './flow-control';
import { OutputBatcher } from './output-batcher';

describe('FlowControl', () => {
  it('pauses above the high watermark, resumes below the low one, by acked chunk offsets', () => {
    const calls: string[] = [];
    const fc = new FlowControl(
      () => calls.push('pause'),
      () => calls.push('resume'),
      { high: 100, low: 10 },
    );
    fc.chunkSent(1, 60);
    fc.chunkSent(3, 50); // seq 2 was another event type
    expect(calls).toEqual(['pause']);
    expect(fc.backlog).toBe(110);
    fc.chunkSent(4, 5);
    expect(calls).toEqual(['pause']);
    fc.ack(2); // covers chunk 1 only
    expect(fc.ackedChars).toBe(60);
    expect(fc.paused).toBe(true);
    fc.ack(3);
    expect(fc.backlog).toBe(5);
    expect(calls).toEqual(['pause', 'resume']);
    fc.ack(1); // stale
    expect(fc.ackedChars).toBe(110);
  });
});

/** Runs `fn` on vitest's fake clock, and gives the real one back whatever happens. */
function withFakeTimers(fn: () => void): void {
  vi.useFakeTimers();
  try {
    fn();
  } finally {
    vi.useRealTimers();
  }
}

describe('OutputBatcher', () => {
  it('sends the first write after a quiet spell at once, then merges until flushed or large enough', () => {
    const out: string[] = [];
    const b = new OutputBatcher((d) => out.push(d), 1_000, 10);
    b.push('echo');
    expect(out).toEqual(['echo']); // sparse output (a keystroke's echo) does not wait
    b.push('abc');
    b.push('def');
    expect(out).toEqual(['echo']);
    b.push('ghijk');
    expect(out).toEqual(['echo', 'abcdefghijk']);
    b.push('z');
    b.flush();
    b.flush();
    expect(out).toEqual(['echo', 'abcdefghijk', 'z']);
    b.push('next');
    expect(out.at(-1)).toBe('next'); // flushed: the next write goes at once again
    b.flush();
  });

  it('keeps coalescing while output keeps coming and goes back to immediate after a quiet window', async () => {
    const out: string[] = [];
    const b = new OutputBatcher((d) => out.push(d), 5, 1_000);
    b.push('a');
    b.push('b');
    b.push('c');
    await vi.waitFor(() => expect(out).toEqual(['a', 'bc']));
    // The window after 'bc' closes empty; then a write is sent at once.
    await vi.waitFor(() => expect(b.idle).toBe(true));
    b.push('x');
    expect(out).toEqual(['a', 'bc', 'x']);
    b.flush();
  });

  it('lengthens its window while a flood goes on (fewer, larger events) and starts over after a quiet one', () =>
    withFakeTimers(() => {
      const out: string[] = [];
      const b = new OutputBatcher((d) => out.push(d), 1, 1_000_000, 4, 1);
      b.push('a');
      expect(out).toEqual(['a']);
      // Keep writing every 1 ms: windows of 1, 2, 4, 4 ms close with data.
      const closes: number[] = [];
      for (let t = 1; t <= 11; t++) {
        b.push(String(t));
        const before = out.length;
        vi.advanceTimersByTime(1);
        if (out.length > before) closes.push(t);
      }
      expect(closes).toEqual([1, 3, 7, 11]);
      expect(out.slice(1)).toEqual(['1', '23', '4567', '891011']);
      // A window with nothing in it ends the batching: the next write goes at once, windows short again.
      vi.advanceTimersByTime(4);
      expect(b.idle).toBe(true);
      b.push('x');
      expect(out.at(-1)).toBe('x');
      b.push('y');
      vi.advanceTimersByTime(1);
      expect(out.at(-1)).toBe('y');
      b.flush();
    }));

  it('keeps batching a flood across a flow-control pause: its first read after the resume waits in a window of the length it had', () =>
    withFakeTimers(() => {
      const out: string[] = [];
      const b = new OutputBatcher((d) => out.push(d), 1, 1_000_000, 4, 1);
      b.push('a');
      for (let t = 1; t <= 7; t++) {
        b.push(String(t));
        vi.advanceTimersByTime(1);
      }
      expect(out).toEqual(['a', '1', '23', '4567']); // windows of 1, 2, 4 ms; the next one is 4 ms too
      b.pauseReading();
      vi.advanceTimersByTime(20); // windows close empty while nothing can be read
      expect(b.idle).toBe(true);
      b.resumeReading();
      expect(b.idle).toBe(false);
      b.push('r1'); // not sent alone, as after a quiet spell
      b.push('r2');
      expect(out).toHaveLength(4);
      vi.advanceTimersByTime(3);
      expect(out).toHaveLength(4); // the window kept its 4 ms
      vi.advanceTimersByTime(1);
      expect(out.at(-1)).toBe('r1r2');
      // A window that closes empty while reading goes on is a quiet spell again: the next write goes at once.
      vi.advanceTimersByTime(4);
      b.push('x');
      expect(out.at(-1)).toBe('x');
      b.flush();
    }));

  it("sends a key's echo at once inside an open window, after what the window held, and batches again after it", () => {
    const out: string[] = [];
    const b = new OutputBatcher((d) => out.push(d), 1_000, 1_000_000);
    b.push('prompt$ ');
    b.push('late paint');
    expect(out).toEqual(['prompt$ ']); // the window is open: held
    b.expectEcho();
    b.push('k');
    expect(out).toEqual(['prompt$ ', 'late paintk']);
    b.push('more');
    expect(out).toHaveLength(2); // one echo only: what follows is batched as before
    b.flush();
    expect(out.at(-1)).toBe('more');
    // Expected while idle, the echo goes at once anyway and does not linger for a later write.
    b.expectEcho();
    b.push('x');
    b.push('y');
    expect(out.at(-1)).toBe('x');
    b.flush();
  });

  it('keeps its short window for small output (echoes of keys typed back to back)', () =>
    withFakeTimers(() => {
      const out: string[] = [];
      const b = new OutputBatcher((d) => out.push(d), 1, 1_000_000, 4, 100);
      b.push('a');
      for (let t = 1; t <= 6; t++) {
        b.push(String(t));
        vi.advanceTimersByTime(1);
        expect(out.at(-1)).toBe(String(t)); // every window closes after 1 ms: none grew
      }
      b.flush();
    }));
});

describe('session shell setup', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir('bashrc');
  });
  afterEach(() => removeTempDir(dir));

  it('shows a hostile room name in the prompt as text without running it', () => {
    const marker = path.join(dir, 'pwned');
    const room = `x'$(touch ${marker})\`touch ${marker}\``;
    fs.writeFileSync(path.join(dir, '.bashrc'), renderBashrc(room));
    const prompt = execFileSync('/bin/bash', ['--noprofile', '--norc', '-c', `source ${path.join(dir, '.bashrc')}; printf '%s' "\${PS1@P}"`], {
      // Cast: Next's global types demand NODE_ENV on every ProcessEnv.
      env: buildSessionEnv({ session_id: 'sess_prompt001', home: dir }) as unknown as NodeJS.ProcessEnv,
      encoding: 'utf8',
    });
    expect(prompt).toContain(room);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('builds the environment from nothing', () => {
    const env = buildSessionEnv({ session_id: 'sess_envtest01', home: '/h', user: 'u' });
    expect(Object.keys(env).sort()).toEqual(['AGENT_VILLAGE_INBOX', 'AGENT_VILLAGE_SESSION_ID', 'COLORTERM', 'HOME', 'LANG', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']);
  });
});
