import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FLOW_CONTROL } from '../../protocol';
import { createCommand, outputOf, waitFor } from '../testing/fixtures';
import { makeSessionHarness, type SessionHarness } from '../testing/session-harness';
import { outputChunkMax } from './terminal-output';
import { BESIDE_TYPING_WATERMARKS, TypingWatch } from './typing-watch';

/** Node reads a PTY into buffers of this size at most. */
const MAX_READ = 64 * 1024;
/** While another session is typed into, one chunk carries the small window's share plus the read that crossed it. */
const ONE_CHUNK = outputChunkMax(BESIDE_TYPING_WATERMARKS) + MAX_READ;

describe('TypingWatch', () => {
  it("narrows every session's window but the typed one's, for the hold only", () => {
    let now = 0;
    const w = new TypingWatch(1_000, () => now);
    const normal = { high: 10, low: 5 };
    expect(w.watermarks('a', normal)).toBe(normal);
    w.keyTyped('a');
    expect(w.typingBeside('a')).toBe(false); // its own key does not slow a session down
    expect(w.watermarks('b', normal)).toBe(BESIDE_TYPING_WATERMARKS);
    now = 1_000;
    expect(w.typingBeside('b')).toBe(true);
    now = 1_001;
    expect(w.watermarks('b', normal)).toBe(normal);
    w.keyTyped('a');
    w.forget('a'); // the session ended
    expect(w.typingBeside('b')).toBe(false);
  });
});

describe('a flood beside a session being typed into (real PTYs)', () => {
  let h: SessionHarness;
  let now = 0;
  beforeEach(async () => {
    now = 0;
    h = await makeSessionHarness('typing', { deps: () => ({ typing: new TypingWatch(1_000, () => now) }) });
  });
  afterEach(() => h.close());

  it("holds the flood to the small window while the other is typed into, echoes the key, and gives the full window back after", async () => {
    const quiet = createCommand({ repo_source: h.source });
    const flood = createCommand({ repo_source: h.source });
    for (const c of [quiet, flood]) expect(h.manager.create(c).ok).toBe(true);
    const q = h.manager.get(quiet.session_id)!;
    const f = h.manager.get(flood.session_id)!;
    await waitFor(() => q.alive && f.alive, 'both running');

    expect(h.manager.input({ session_id: quiet.session_id, data: 'echo typed-$((6*7))', mode: 'line' }).ok).toBe(true);
    expect(h.manager.input({ session_id: flood.session_id, data: 'yes flooding-the-terminal', mode: 'line' }).ok).toBe(true);
    // Nobody acks the flood's output: its PTY pauses once its window is full.
    await waitFor(() => f.flow.paused, 'the flood paused');
    expect(f.flow.backlog).toBeGreaterThan(BESIDE_TYPING_WATERMARKS.high);
    expect(f.flow.backlog).toBeLessThanOrEqual(BESIDE_TYPING_WATERMARKS.high + ONE_CHUNK);
    // Its chunks are small too: none is a big one a key's echo would queue behind.
    const floodChunks = h.events.filter((e) => e.session_id === flood.session_id && e.type === 'TERMINAL_CHUNK');
    expect(Math.max(...floodChunks.map((e) => (e.type === 'TERMINAL_CHUNK' ? e.data.length : 0)))).toBeLessThanOrEqual(ONE_CHUNK);
    await waitFor(() => outputOf(h.events, quiet.session_id).includes('typed-42'), "the quiet session's output");

    // Nobody typed for the hold: the next window is the full one.
    now = 2_000;
    h.manager.terminalAck({ session_id: flood.session_id, seq: h.spool.lastSeq(flood.session_id) });
    await waitFor(() => f.flow.pauseCount === 2, 'the flood paused again');
    expect(f.flow.backlog).toBeGreaterThan(FLOW_CONTROL.HIGH_WATERMARK_CHARS);
    expect(h.manager.input({ session_id: flood.session_id, data: '\x03', mode: 'raw' }).ok).toBe(true);
  });
});
