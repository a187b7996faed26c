/**
 * What bench:mirror and bench:mirror-heap feed the control plane's terminal mirror: the kinds of
 * output users flood, cut into the live path's events, and the live path's feed of a mirror.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldLoop, setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_TERMINAL_SCROLLBACK, type WireEvent } from '../protocol';
import { TerminalMirror } from '../server/services/terminal/mirror';
import { DEFAULT_SEEK_EVERY_CHARS, DEFAULT_SNAPSHOT_EVERY_CHARS, MAX_SEEK_STRETCH, MAX_SNAPSHOT_STRETCH, SEEK_SCROLLBACK } from '../server/services/terminal/screens';

/** The runner's batcher flushes at 64 KB under a flood (runner/pty/output-batcher.ts). */
export const EVENT_CHARS = 64 * 1024;
/** Events per runner batch in a flood: ~900 KB arrive in one call, as seen in the live profile. */
export const EVENTS_PER_BATCH = 14;
export const COLS = 120;
export const ROWS = 32;
export const ROOT = join(import.meta.dirname, '..');

/** Repeats `line(i)` until `chars` characters. */
function fill(chars: number, line: (i: number) => string): string {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < chars; i++) {
    const l = line(i);
    parts.push(l);
    n += l.length;
  }
  return parts.join('');
}

const COLOURS = ['\x1b[32m', '\x1b[33m', '\x1b[36m', '\x1b[1;31m', '\x1b[2m'];
function buildLog(i: number): string {
  const width = 80 + ((i * 37) % 41);
  const head = `${COLOURS[i % COLOURS.length]}[${String(i % 60).padStart(2, '0')}:${String(i % 97).padStart(2, '0')}] ${i % 9 ? 'INFO' : 'WARN'}\x1b[0m `;
  const body = `compiling src/module${i % 300}/file${i % 17}.ts → dist/${'x'.repeat(width)}`.slice(0, width - 16);
  return `${head}\x1b[1m${body.slice(0, 20)}\x1b[22m${body.slice(20)}\r\n`;
}

/** The project's own sources, as a pty hands `cat` output on (LF → CRLF). */
function sources(): string {
  const dir = join(ROOT, 'server/services');
  const text = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
  return text.replace(/\n/g, '\r\n');
}

/** A top-like program on the alternate screen: cursor moves and coloured cells, redrawn whole. */
function tuiFrame(i: number): string {
  let out = '\x1b[H';
  for (let r = 1; r <= ROWS; r++) {
    out += `\x1b[${r};1H\x1b[${r % 2 ? 7 : 0}m${String(i + r).padStart(6)} \x1b[0m\x1b[3${r % 8}m${'█'.repeat((i + r) % 40)}\x1b[0m\x1b[K`;
  }
  return out;
}

export const WORKLOADS: { name: string; text: (chars: number) => string }[] = [
  { name: 'seq (numbered lines)', text: (c) => fill(c, (i) => `${i}\r\n`) },
  // bench:live's and the control-plane flood's lines: `seq -f '%098g'`, 100 bytes with the newline.
  { name: 'seq -f %098g (100-character lines, the floods of bench:live)', text: (c) => fill(c, (i) => `${String(i).padStart(98, '0')}\r\n`) },
  { name: 'build log, SGR, 80–120 cols', text: (c) => fill(c, buildLog) },
  { name: 'cat of source files', text: (c) => { const s = sources(); return fill(c, () => s); } },
  { name: 'TUI redraws (alt screen)', text: (c) => `\x1b[?1049h${fill(c, tuiFrame)}\x1b[?1049l` },
];

/**
 * The mirror as screens.ts runs it: seek points inside, reattach snapshots by screens.ts's rule;
 * `perTurn` events fed per macrotask (the live path feeds ~1.4 per call, bench:live 08:50).
 */
export interface Feed {
  seekPoints?: boolean;
  perTurn?: number;
  /** 0: as fast as the loop turns. */
  mbps?: number;
  /** The reattach snapshot interval (screens.ts's default). */
  snapshotChars?: number;
  /** A snapshot every interval of any output: what the rule came to in a flood before 09:10. */
  everyChars?: boolean;
  /** Seek snapshots after this many seek intervals of any output at most (1: every 256 KB, as before 09:45). */
  seekStretch?: number;
  /** Off: periodic snapshots keep their whole scrollback (before the restore points of 27 Nov noon). */
  restorePoints?: boolean;
  /** Chunks handed over as UTF-8 bytes too (TerminalMirror.feed's `utf8`: the runner's bytes, as the live path has them). */
  utf8?: boolean;
}

export async function mirror(events: WireEvent[], { seekPoints = true, perTurn = EVENTS_PER_BATCH, mbps = 0, snapshotChars = DEFAULT_SNAPSHOT_EVERY_CHARS, everyChars = false, seekStretch = MAX_SEEK_STRETCH, restorePoints = true, utf8 = false }: Feed = {}): Promise<void> {
  const m = new TerminalMirror({ cols: COLS, rows: ROWS, scrollback: DEFAULT_TERMINAL_SCROLLBACK });
  m.restorePoints = restorePoints;
  const pending: Promise<unknown>[] = [];
  if (seekPoints) m.seekPoints = { every: DEFAULT_SEEK_EVERY_CHARS, most: DEFAULT_SEEK_EVERY_CHARS * seekStretch, lines: SEEK_SCROLLBACK, taken: (p) => pending.push(p) };
  const t0 = performance.now();
  let fed = 0;
  for (let i = 0; i < events.length; i += perTurn) {
    const batch = events.slice(i, i + perTurn);
    m.feed(batch, utf8 ? new Map(batch.map((e) => [e.seq, Buffer.from(e.data!, 'utf8')])) : undefined);
    for (const e of batch) fed += e.data!.length;
    const due = mbps > 0 ? t0 + (fed / (mbps * 1024 * 1024)) * 1000 - performance.now() : 0;
    if (due > 1) await sleep(due);
    // screens.ts's rule: an interval of parsed output, or MAX_SNAPSHOT_STRETCH intervals of any.
    const parsed = everyChars ? m.charsSinceSnapshot : m.parsedSinceSnapshot;
    if (parsed >= snapshotChars || m.charsSinceSnapshot >= snapshotChars * MAX_SNAPSHOT_STRETCH) pending.push(m.snapshot(true));
    await yieldLoop();
  }
  // Parsed through the end (a screen-only serialisation: the full one is timed on its own).
  pending.push(m.seekPoint(0));
  await Promise.all(pending);
  m.dispose();
}

export function eventsOf(text: string): WireEvent[] {
  const out: WireEvent[] = [];
  for (let at = 0; at < text.length; at += EVENT_CHARS) out.push({ seq: out.length + 1, ts: out.length, type: 'TERMINAL_CHUNK', data: text.slice(at, at + EVENT_CHARS) });
  return out;
}
