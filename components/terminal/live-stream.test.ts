import { describe, expect, it, vi } from 'vitest';
import type { Terminal as XTerm } from '@xterm/xterm';
import { FLOW_CONTROL } from '../../protocol';
import type { UiSocket } from '../realtime/socket';
import { streamLive } from './live-stream';
import { FLOOD_WRITE_BYTES } from './write-pacer';

const SESSION = 'sess_flood01';

/** A socket.io client stand-in: the test plays the server's side of its events. */
function fakeSocket() {
  const handlers = new Map<string, (body: unknown) => void>();
  const sent: Array<{ event: string; body: Record<string, unknown> }> = [];
  const socket = {
    connected: true,
    on: (event: string, fn: (body: unknown) => void) => handlers.set(event, fn),
    off: (event: string) => handlers.delete(event),
    emit(event: string, body: Record<string, unknown>, ack?: (res: unknown) => void) {
      sent.push({ event, body });
      ack?.({ ok: true, data: null });
    },
  };
  const serve = (event: string, body: unknown) => handlers.get(event)!(body);
  return { socket: socket as unknown as UiSocket, sent, serve };
}

/** An xterm stand-in that parses at once: what it was handed, in order. */
function fakeTerm() {
  const written: string[] = [];
  const term = {
    options: {} as Record<string, unknown>,
    reset: () => written.push('<reset>'),
    write(data: string | Uint8Array, parsed?: () => void) {
      written.push(typeof data === 'string' ? data : Buffer.from(data).toString('latin1'));
      if (parsed) queueMicrotask(parsed);
    },
  };
  return { term: term as unknown as XTerm, text: () => written.join('') };
}

describe('a live terminal under a flood', () => {
  it('hands every byte to xterm once, in order, acks the last seq, and tells the panel only attach and live', async () => {
    (globalThis as { window?: unknown }).window ??= {};
    const { socket, sent, serve } = fakeSocket();
    const { term, text } = fakeTerm();
    const phases: boolean[] = [];
    const errors: Array<string | null> = [];
    const stream = streamLive(term, socket, SESSION, { onPhase: (r) => phases.push(r), onError: (e) => errors.push(e) });

    serve('session:snapshot', { session_id: SESSION, screen: { seq: 2, ts: 0, cols: 80, rows: 24, data: 'screen|' }, scrollback: 1000 });
    serve('session:events', { session_id: SESSION, replay: true, events: [{ type: 'TERMINAL_CHUNK', seq: 3, data: 'tail|' }] });
    serve('session:replayed', { session_id: SESSION });

    // 300 frames of two chunks each, bigger than a flood's write; every tenth comes twice
    // (a reconnect's overlap): the second copy must be skipped.
    let expected = 'screen|tail|';
    let seq = 4;
    const chunk = (n: number) => `${String(n).padStart(8, '0')}${'.'.repeat(FLOOD_WRITE_BYTES / 2)}\n`;
    for (let i = 0; i < 300; i++) {
      const a = chunk(seq);
      const b = chunk(seq + 1);
      const frame = { session_id: SESSION, from_seq: seq, sizes: [a.length, b.length], ts: 0, data: new Uint8Array(Buffer.from(a + b, 'latin1')) };
      serve('terminal:output', frame);
      if (i % 10 === 0) serve('terminal:output', frame);
      expected += a + b;
      seq += 2;
    }
    const last = seq - 1;
    await expect.poll(() => text().length, { timeout: 30_000 }).toBe(expected.length + '<reset>'.length);
    expect(text()).toBe('<reset>' + expected);
    await expect.poll(() => sent.filter((s) => s.event === 'terminal:ack').at(-1)?.body.seq, { timeout: 30_000 }).toBe(last);
    // The panel re-renders on phase and error changes: a flood must cause none.
    expect(phases).toEqual([true, false]);
    expect(errors).toEqual([null]);
    stream.dispose();
  });

  it("acks a flood's batch as soon as xterm has parsed all it was handed; a line waits for the delay", async () => {
    (globalThis as { window?: unknown }).window ??= {};
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { socket, sent, serve } = fakeSocket();
      const { term } = fakeTerm();
      const stream = streamLive(term, socket, SESSION, { onPhase: () => undefined, onError: () => undefined });
      const acks = () => sent.filter((s) => s.event === 'terminal:ack').map((s) => s.body.seq);
      const frame = (seq: number, text: string) => ({ session_id: SESSION, from_seq: seq, sizes: [text.length], ts: 0, data: new Uint8Array(Buffer.from(text, 'latin1')) });
      const parsedNow = () => new Promise<void>((r) => queueMicrotask(() => queueMicrotask(r)));
      serve('session:snapshot', { session_id: SESSION, screen: { seq: 0, ts: 0, cols: 80, rows: 24, data: '' }, scrollback: 1000 });
      serve('session:replayed', { session_id: SESSION });
      serve('terminal:output', frame(1, 'a line\r\n'));
      await parsedNow();
      expect(acks()).toEqual([]); // one ack for many lines: after ACK_DELAY_MS
      vi.advanceTimersByTime(FLOW_CONTROL.ACK_DELAY_MS);
      expect(acks()).toEqual([1]);
      // Between ACK_DRAINED_CHARS and ACK_CHARS: no timer needed once xterm has drained.
      serve('terminal:output', frame(2, 'x'.repeat(FLOW_CONTROL.ACK_DRAINED_CHARS)));
      await parsedNow();
      expect(acks()).toEqual([1, 2]);
      stream.dispose();
    } finally {
      vi.useRealTimers();
    }
  });

  it('reattaching in the middle of a flood paints the new screen and then every byte after it once', async () => {
    (globalThis as { window?: unknown }).window ??= {};
    const { socket, sent, serve } = fakeSocket();
    const { term, text } = fakeTerm();
    const stream = streamLive(term, socket, SESSION, { onPhase: () => undefined, onError: () => undefined });
    const chunk = (n: number) => `${String(n).padStart(8, '0')}${'.'.repeat(FLOOD_WRITE_BYTES)}\n`;
    const frame = (seq: number) => ({ session_id: SESSION, from_seq: seq, sizes: [chunk(seq).length], ts: 0, data: new Uint8Array(Buffer.from(chunk(seq), 'latin1')) });
    serve('session:snapshot', { session_id: SESSION, screen: { seq: 0, ts: 0, cols: 80, rows: 24, data: '' }, scrollback: 1000 });
    serve('session:replayed', { session_id: SESSION });
    // A flood: the first frame is written, the next ones wait in the pacer.
    for (let seq = 1; seq <= 20; seq++) serve('terminal:output', frame(seq));
    // The connection drops and comes back: the page attaches after what it was sent (20), and the
    // server answers with a screen of seq 12, the stored events after it, then live again.
    serve('connect', undefined);
    expect(sent.filter((s) => s.event === 'session:attach').at(-1)?.body.after_seq).toBe(20);
    serve('session:snapshot', { session_id: SESSION, screen: { seq: 12, ts: 0, cols: 80, rows: 24, data: 'SCREEN@12|' }, scrollback: 1000 });
    const stored = [13, 14, 15, 16, 17, 18, 19, 20].map((seq) => ({ type: 'TERMINAL_CHUNK', seq, data: chunk(seq) }));
    serve('session:events', { session_id: SESSION, replay: true, events: stored });
    serve('session:replayed', { session_id: SESSION });
    for (let seq = 20; seq <= 40; seq++) serve('terminal:output', frame(seq)); // 20 again: the live stream overlaps the replay
    let expected = 'SCREEN@12|';
    for (let seq = 13; seq <= 40; seq++) expected += chunk(seq);
    await expect.poll(() => text().endsWith(chunk(40)), { timeout: 30_000 }).toBe(true);
    expect(text().slice(text().lastIndexOf('<reset>') + '<reset>'.length)).toBe(expected);
    await expect.poll(() => sent.filter((s) => s.event === 'terminal:ack').at(-1)?.body.seq, { timeout: 30_000 }).toBe(40);
    stream.dispose();
  });
});
