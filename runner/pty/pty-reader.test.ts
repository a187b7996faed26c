import { spawn, type IPty } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { readPty } from './pty-reader';

const spawned: IPty[] = [];
afterEach(() => {
  for (const p of spawned.splice(0)) {
    try {
      p.kill('SIGKILL');
    } catch {
      // Exited already.
    }
  }
});

function start(script: string): IPty {
  const p = spawn('bash', ['-c', script], { name: 'xterm-256color', cols: 80, rows: 24, cwd: '/tmp', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' } });
  spawned.push(p);
  return p;
}

/** Collects a PTY's text through readPty; resolves with all of it once the PTY exited. */
function collect(p: IPty) {
  let text = '';
  const waiters = new Set<() => void>();
  const reader = readPty(p, (t) => {
    text += t;
    for (const w of [...waiters]) w();
  });
  const exited = new Promise<string>((resolve) => p.onExit(() => resolve(text + reader.end())));
  const until = (check: (t: string) => boolean) =>
    new Promise<void>((resolve) => {
      const w = () => {
        if (!check(text)) return;
        waiters.delete(w);
        resolve();
      };
      waiters.add(w);
      w();
    });
  return { reader, exited, until, text: () => text };
}

describe('readPty: PTY output as text, read into one buffer', () => {
  it('reads into its own buffer with this node-pty and Node', () => {
    const { reader } = collect(start('true'));
    expect(reader.ownBuffer).toBe(true);
  });

  it('holds a character split across reads until its last byte arrives', async () => {
    // The program writes "A" and the first two bytes of "€", then waits for a line before the last byte.
    const p = start(`stty -echo; printf 'A\\xe2\\x82'; read x; printf '\\xacB'`);
    const out = collect(p);
    await out.until((t) => t.includes('A'));
    expect(out.text()).toBe('A');
    p.write('\r');
    expect(await out.exited).toBe('A€B');
  });

  it('keeps every character of a flood of multi-byte text (reads end mid-character)', async () => {
    // 3-byte and 4-byte characters: 4,095-byte reads split both kinds.
    const line = '€😀ü'.repeat(30);
    const out = collect(start(`for i in $(seq 1 2000); do echo '${line}'; done`));
    const text = await out.exited;
    expect(text).not.toContain('\ufffd');
    expect(text).toBe(`${line}\r\n`.repeat(2000));
  });

  it('stops and starts reading with pause() and resume() (flow control), losing nothing', async () => {
    const p = start('seq 1 50000');
    let reads = 0;
    let text = '';
    const reader = readPty(p, (t) => {
      text += t;
      reads++;
      // Every read pauses the PTY, as flow control does above its watermark.
      p.pause();
      setImmediate(() => p.resume());
    });
    await new Promise<void>((resolve) => p.onExit(() => resolve()));
    text += reader.end();
    expect(reads).toBeGreaterThan(1);
    expect(text.split('\r\n').slice(0, -1)).toEqual(Array.from({ length: 50000 }, (_, i) => String(i + 1)));
  });

  it('falls back to onData for a PTY without the socket it expects', () => {
    const listeners: Array<(d: string) => void> = [];
    const fake = { onData: (l: (d: string) => void) => (listeners.push(l), { dispose: () => listeners.splice(0) }) } as unknown as IPty;
    const got: string[] = [];
    const reader = readPty(fake, (t) => got.push(t));
    listeners[0]!('hi');
    expect(reader.ownBuffer).toBe(false);
    expect(got).toEqual(['hi']);
  });
});
