import xtermHeadless from '@xterm/headless';
import serializeAddon from '@xterm/addon-serialize';
import { describe, expect, it } from 'vitest';
import type { TerminalScreen, WireEvent } from '../../../protocol';
import { TerminalMirror } from './mirror';
import { stopMirrorThread } from './mirror-thread';

const { Terminal } = xtermHeadless;
const { SerializeAddon } = serializeAddon;
const SIZE = { cols: 80, rows: 24, scrollback: 1_000 };

/** A viewer's terminal: every byte written, then serialised the same way. */
async function liveScreen(chunks: string[], size = SIZE): Promise<string> {
  const term = new Terminal({ ...size, allowProposedApi: true });
  const s = new SerializeAddon();
  term.loadAddon(s as never);
  for (const c of chunks) term.write(c);
  await new Promise<void>((r) => term.write('', r));
  const out = s.serialize({ scrollback: size.scrollback });
  term.dispose();
  return out;
}

const chunk = (seq: number, data: string): WireEvent => ({ seq, type: 'TERMINAL_CHUNK', ts: 1_000 + seq, data });

/** Colourful numbered lines, more than the scrollback keeps. */
function output(lines: number, from = 0): string[] {
  const out: string[] = [];
  for (let i = from; i < from + lines; i++) out.push(`\x1b[3${i % 8}mline ${i}\x1b[0m ${'x'.repeat(i % 50)}\r\n`);
  return out;
}

describe('TerminalMirror', () => {
  it('counts toward the next snapshot only the output the thread really parsed, and the screen stays exact', async () => {
    const chunks = output(6_000);
    const mirror = new TerminalMirror(SIZE);
    mirror.feed(chunks.map((c, i) => chunk(i + 1, c)));
    const total = chunks.join('').length;
    // An urgent read: the thread parses the queue, skipping what scrolled out of the 1,000 lines kept.
    const screen = await mirror.seekPoint(SIZE.scrollback);
    expect(screen.data).toBe(await liveScreen(chunks));
    expect(mirror.charsSinceSnapshot).toBe(total);
    expect(mirror.parsedSinceSnapshot).toBeGreaterThan(0);
    expect(mirror.parsedSinceSnapshot).toBeLessThan(total * 0.9);
    await mirror.snapshot();
    expect(mirror.parsedSinceSnapshot).toBe(0);
    mirror.dispose();
  });

  it('output still queued in the thread does not count as parsed, so a flood does not bring the next snapshot early', async () => {
    const chunks = output(20_000);
    const total = chunks.join('').length;
    const mirror = new TerminalMirror(SIZE);
    mirror.feed(chunks.map((c, i) => chunk(i + 1, c)));
    // Nothing answered yet: nothing is known to be parsed (it counted all of it before).
    expect(mirror.charsSinceSnapshot).toBe(total);
    expect(mirror.parsedSinceSnapshot).toBe(0);
    const lazy = mirror.snapshot(true);
    // While that snapshot is out, the next is not due by what was parsed.
    mirror.feed(output(5_000, 20_000).map((c, i) => chunk(chunks.length + i + 1, c)));
    expect(mirror.parsedSinceSnapshot).toBe(0);
    await lazy;
    await mirror.seekPoint(10);
    // Only what the thread parsed after the snapshot's place counts: the 1,000-line scrollback's worth, not 5,000 lines.
    expect(mirror.parsedSinceSnapshot).toBeGreaterThan(0);
    expect(mirror.parsedSinceSnapshot).toBeLessThan(output(5_000, 20_000).join('').length / 2);
    mirror.dispose();
  });

  it('a screen restored from its snapshot serialises exactly like the live terminal (colours, scrollback bound)', async () => {
    const chunks = output(3_000);
    const mirror = new TerminalMirror(SIZE);
    mirror.feed(chunks.map((c, i) => chunk(i + 1, c)));
    const snap = await mirror.snapshot();
    expect(snap.seq).toBe(chunks.length);
    const restored = new TerminalMirror(SIZE, snap);
    expect((await restored.snapshot()).data).toBe(await liveScreen(chunks));
    expect(snap.data).toContain('line 2999');
    expect(snap.data).not.toContain('line 1000\x1b'); // beyond the 1,000 lines of scrollback
  });

  it('a periodic snapshot that the output after it scrolls out holds only the screen, and a restore from it paints the live screen', async () => {
    const chunks = output(6_000);
    const events = chunks.map((c, i) => chunk(i + 1, c));
    const mirror = new TerminalMirror(SIZE);
    mirror.feed(events.slice(0, 3_000));
    const periodic = mirror.snapshot(true);
    mirror.feed(events.slice(3_000));
    // The 3,000 lines after it push every line it had out of a 1,000-line scrollback.
    await mirror.seekPoint(0);
    const snap = await periodic;
    expect(snap.seq).toBe(3_000);
    expect(snap.data).toContain('line 2999');
    expect(snap.data).not.toContain('line 2970\x1b');
    // An attach is never answered from it: it gets the whole scrollback.
    expect((await mirror.snapshot()).data).toBe(await liveScreen(chunks));
    const restored = new TerminalMirror(SIZE, snap);
    restored.feed(events.slice(3_000));
    expect((await restored.snapshot()).data).toBe(await liveScreen(chunks));
    restored.dispose();
    // Without enough output after it, it keeps the whole scrollback.
    const short = new TerminalMirror(SIZE);
    short.feed(events.slice(0, 3_000));
    const kept = short.snapshot(true);
    short.feed(events.slice(3_000, 3_500));
    await short.seekPoint(0);
    expect((await kept).data).toContain('line 2000\x1b');
    short.dispose();
    mirror.dispose();
  });

  it('keeps the alternate screen (a full-screen program) and the normal screen under it', async () => {
    const chunks = [...output(200), '\x1b[?1049h\x1b[H\x1b[2J\x1b[7mTOP\x1b[0m\x1b[5;10Hcpu 42%'];
    const mirror = new TerminalMirror(SIZE);
    mirror.feed(chunks.map((c, i) => chunk(i + 1, c)));
    const snap = await mirror.snapshot();
    const restored = new TerminalMirror(SIZE, snap);
    const live = await liveScreen(chunks);
    expect((await restored.snapshot()).data).toBe(live);
    expect(live).toContain('cpu 42%');
    // Leaving the alternate screen shows the normal one again, in both.
    const after = [...chunks, '\x1b[?1049l'];
    restored.feed([chunk(chunks.length + 1, '\x1b[?1049l')]);
    expect((await restored.snapshot()).data).toBe(await liveScreen(after));
  });

  it('applies events in seq order: resends are ignored, early ones wait for the hole to fill', async () => {
    const chunks = output(10);
    const events = chunks.map((c, i) => chunk(i + 1, c));
    const mirror = new TerminalMirror(SIZE);
    mirror.feed(events.slice(0, 3));
    mirror.feed(events.slice(5)); // 4 and 5 are late
    expect(mirror.seq).toBe(3);
    mirror.feed([...events.slice(0, 5)]); // the resend fills the hole (1–3 again are ignored)
    expect(mirror.seq).toBe(10);
    expect((await mirror.snapshot()).data).toBe(await liveScreen(chunks));
  });

  it('prints the same notes as the browser for a lost stretch and the end of the session', async () => {
    const mirror = new TerminalMirror(SIZE);
    mirror.feed([chunk(1, 'hi\r\n'), { seq: 2, type: 'SESSION_STATE_CHANGED', ts: 5, payload: { to: 'COMPLETED', reason: 'exit 0' } }]);
    expect((await mirror.snapshot()).data).toContain('[session finished: exit 0]');
  });
});

describe('TerminalMirror in its thread', () => {
  it('a snapshot asked for mid-flood is exactly the screen of the seq it reports (no lag, no reordering)', async () => {
    // Chunks of 64 KB, as a flood arrives, fed a batch at a time with snapshots asked in between.
    const text = output(40_000).join('');
    const chunks: string[] = [];
    for (let at = 0; at < text.length; at += 64 * 1024) chunks.push(text.slice(at, at + 64 * 1024));
    const mirror = new TerminalMirror(SIZE);
    const asked: { lines: number; screen: Promise<TerminalScreen> }[] = [];
    for (let i = 0; i < chunks.length; i += 3) {
      mirror.feed(chunks.slice(i, i + 3).map((c, j) => chunk(i + j + 1, c)));
      asked.push({ lines: SIZE.scrollback, screen: mirror.snapshot() }, { lines: 10, screen: mirror.seekPoint(10) });
    }
    expect(asked.length).toBeGreaterThan(10);
    for (const a of asked) {
      const s = await a.screen;
      expect(s.data).toBe(await liveScreenLines(chunks.slice(0, s.seq), a.lines));
    }
    mirror.dispose();
  });

  it('wide characters, emoji and a surrogate pair cut between two events paint as in a viewer', async () => {
    const emoji = '\u{1F600}';
    const chunks = ['日本語 wide\r\n', `smile ${emoji} é\r\n`, `cut ${emoji[0]}`, `${emoji[1]} joined\r\n`, 'ok'];
    const mirror = new TerminalMirror(SIZE);
    mirror.feed(chunks.map((c, i) => chunk(i + 1, c)));
    const snap = await mirror.snapshot();
    expect(snap.data).toBe(await liveScreen(chunks));
    expect(snap.data).toContain(`cut ${emoji} joined`);
    mirror.dispose();
  });

  it('chunks handed over as the UTF-8 of their text (views of one frame, some held out of order) paint as their text does, and the frame stays whole', async () => {
    const chunks = [...output(300), '日本語 \u{1F600} é\r\n', '\x1b[31mred\x1b[0m ok'];
    const frame = Buffer.from(chunks.join(''), 'utf8');
    const utf8 = new Map<number, Uint8Array>();
    for (let i = 0, at = 0; i < chunks.length; i++) {
      const n = Buffer.byteLength(chunks[i]!, 'utf8');
      utf8.set(i + 1, frame.subarray(at, at + n));
      at += n;
    }
    const events = chunks.map((c, i) => chunk(i + 1, c));
    const mirror = new TerminalMirror(SIZE);
    // The second event first: held until the first comes, with its bytes.
    mirror.feed([events[1]!], utf8);
    mirror.feed([events[0]!, ...events.slice(2)], utf8);
    const snap = await mirror.snapshot();
    expect(snap.data).toBe(await liveScreen(chunks));
    // The thread got copies: the frame (which viewers still send) is neither moved nor changed.
    expect(frame.toString('utf8')).toBe(chunks.join(''));
    mirror.dispose();
  });

  it('a resize takes effect after the output fed before it, as on the PTY', async () => {
    const before = output(100);
    const after = output(100, 100);
    const mirror = new TerminalMirror(SIZE);
    mirror.feed(before.map((c, i) => chunk(i + 1, c)));
    mirror.resize(50, 10);
    mirror.feed(after.map((c, i) => chunk(before.length + i + 1, c)));
    const snap = await mirror.snapshot();
    const term = new Terminal({ ...SIZE, allowProposedApi: true });
    const s = new SerializeAddon();
    term.loadAddon(s as never);
    for (const c of before) term.write(c);
    await new Promise<void>((r) => term.write('', () => r()));
    term.resize(50, 10);
    for (const c of after) term.write(c);
    await new Promise<void>((r) => term.write('', r));
    expect({ cols: snap.cols, rows: snap.rows }).toEqual({ cols: 50, rows: 10 });
    expect(snap.data).toBe(s.serialize({ scrollback: SIZE.scrollback }));
    term.dispose();
    mirror.dispose();
  });

  it('lazy reads alone (nobody waiting) still reach the thread and answer the screen of their seq', async () => {
    // Nothing urgent is asked: the outbox posts on its own, and the thread parses when idle.
    const chunks = output(300);
    const mirror = new TerminalMirror(SIZE);
    const points: Promise<TerminalScreen>[] = [];
    for (let i = 0; i < chunks.length; i += 100) {
      mirror.feed(chunks.slice(i, i + 100).map((c, j) => chunk(i + j + 1, c)));
      points.push(mirror.seekPoint(10, true));
    }
    for (const p of await Promise.all(points)) expect(p.data).toBe(await liveScreenLines(chunks.slice(0, p.seq), 10));
    mirror.dispose();
  });

  it('takes seek snapshots by what the thread parses: scrolling text, mostly skipped, gets them up to 4x less often than a TUI', async () => {
    const every = 64 * 1024;
    const count = async (text: string) => {
      const mirror = new TerminalMirror(SIZE);
      const taken: Promise<TerminalScreen>[] = [];
      mirror.seekPoints = { every, most: every * 4, lines: 10, taken: (p) => taken.push(p) };
      let seq = 0;
      for (let at = 0; at < text.length; at += 16 * 1024) {
        mirror.feed([chunk(++seq, text.slice(at, at + 16 * 1024))]);
        // An attach now and then: the thread answers, and says how much it parsed.
        if (seq % 16 === 0) await mirror.snapshot();
      }
      const screens = await Promise.all(taken);
      mirror.dispose();
      return { n: screens.length, seqs: screens.map((s) => s.seq) };
    };
    const MB4 = 4 * 1024 * 1024;
    const plain = await count(output(120_000).join('').slice(0, MB4));
    let tui = '\x1b[?1049h';
    for (let i = 0; tui.length < MB4; i++) tui += `\x1b[${(i % 24) + 1};1H\x1b[3${i % 8}m${String(i).padStart(60, '.')}\x1b[K`;
    const screen = await count(tui);
    // 64 intervals of 64 KB: the TUI takes one each; scrolling text one per 4 (the bound) once
    // the thread has said how little of it it parses (every interval before that).
    expect(screen.n).toBeGreaterThanOrEqual(60);
    expect(plain.n).toBeLessThanOrEqual(screen.n / 2);
    expect(plain.n).toBeGreaterThanOrEqual(16);
  });

  it('a stopped mirror thread fails the reads out, marks its mirrors broken, and the next mirror starts a new one', async () => {
    const old = new TerminalMirror(SIZE);
    old.feed([chunk(1, 'before\r\n')]);
    await old.snapshot();
    old.feed(output(20_000).map((c, i) => chunk(i + 2, c)));
    const outstanding = expect(old.snapshot()).rejects.toThrow(/stopped/);
    await stopMirrorThread();
    await outstanding;
    expect(old.broken).toBe(true);
    old.feed([chunk(20_002, 'after\r\n')]);
    await expect(old.snapshot()).rejects.toThrow(/stopped/);
    const fresh = new TerminalMirror(SIZE);
    fresh.feed([chunk(1, 'again\r\n')]);
    expect(fresh.broken).toBe(false);
    expect((await fresh.snapshot()).data).toBe(await liveScreen(['again\r\n']));
    fresh.dispose();
  });
});

/** A viewer's terminal serialised with only `lines` of scrollback (a seek point). */
async function liveScreenLines(chunks: string[], lines: number): Promise<string> {
  const term = new Terminal({ ...SIZE, allowProposedApi: true });
  const s = new SerializeAddon();
  term.loadAddon(s as never);
  for (const c of chunks) term.write(c);
  await new Promise<void>((r) => term.write('', r));
  const out = s.serialize({ scrollback: lines });
  term.dispose();
  return out;
}
