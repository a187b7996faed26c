import xtermHeadless from '@xterm/headless';
import serializeAddon from '@xterm/addon-serialize';
import { describe, expect, it } from 'vitest';
import type { WireEvent } from '../../../protocol';
import { TerminalMirror } from './mirror';

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
  it('a screen restored from its snapshot serialises exactly like the live terminal (colours, scrollback bound)', async () => {
    const chunks = output(3_000);
    const mirror = new TerminalMirror(SIZE);
    mirror.feed(chunks.map((c, i) => chunk(i + 1, c)));
    const snap = await mirror.snapshot();
    expect(snap.seq).toBe(chunks.length);
    const restored = new TerminalMirror(SIZE, snap);
    expect((await restored.snapshot()).data).toBe(await liveScreen(chunks));
    expect(snap.data).toContain('line 2999');
    expect(snap.data).not.toContain('line 1000 '); // beyond the 1,000 lines of scrollback
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
