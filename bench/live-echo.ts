/**
 * The echo half of bench:live (bench/terminal-live.ts): socket clients of the product's /ui and of
 * the one-hop baseline that ack as their pages do, and key → echo timing with each slow key split
 * at the runner's chunk time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { AckScheduler } from '../components/terminal/ack-scheduler';
import { FLOW_CONTROL, TerminalOutputFrameSchema } from '../protocol';
import { call, type UiClient } from '../server/integration/harness';
import { wallNow } from '../runner/sessions/echo-trace';

/**
 * BENCH_KEY_GAP_MS: a pause between an echo and the next key (default 0: the next key goes the
 * moment the echo is seen, as the one-hop baseline is measured). Back to back, a key lands while
 * the control plane still stores the previous echo's one-event batch; a person typing leaves
 * ~100 ms between keys, so a gap shows what a typed key waits for.
 */
const KEY_GAP_MS = Number(process.env.BENCH_KEY_GAP_MS ?? 0);

/** The p-th percentile of xs. */
export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

/** Where an echo's time went: key → the runner stamping the echo's chunk (`ts`), and from there to the socket. */
interface EchoSplit {
  /** The key's index in its run (0: the first key typed into the session). */
  i: number;
  key: string;
  total: number;
  out: number;
  back: number;
  /** Wall-clock ms (with fractions) when the key was sent and when its echo arrived. */
  sentAt: number;
  seenAt: number;
}
const echoSplits: EchoSplit[] = [];

/**
 * Type one key at a time and time until its echo comes back. Outputs that carry the runner's
 * chunk time (`ts`, same machine clock) also record the split, so the slow keys say which way
 * they were slow (echoSplits, printed by splitSummary).
 */
export async function echoTimes(keys: number, send: (k: string) => void, output: (cb: (d: string, ts?: number) => void) => () => void): Promise<number[]> {
  const times: number[] = [];
  echoSplits.length = 0;
  for (let i = 0; i < keys; i++) {
    const key = String.fromCharCode(97 + (i % 26));
    const t0 = performance.now();
    const wall0 = wallNow();
    let ts: number | undefined;
    await new Promise<void>((resolve) => {
      const off = output((d, chunkTs) => {
        if (d.includes(key)) {
          ts = chunkTs;
          off();
          resolve();
        }
      });
      send(key);
    });
    const total = performance.now() - t0;
    times.push(total);
    if (ts !== undefined) echoSplits.push({ i, key, total, out: ts - wall0, back: wallNow() - ts, sentAt: wall0, seenAt: wallNow() });
    if (i % 26 === 25) send('\x15'); // Ctrl-U keeps the line short
    if (KEY_GAP_MS > 0) await new Promise((r) => setTimeout(r, KEY_GAP_MS));
  }
  send('\x15');
  return times;
}

/** The slowest keys of the last echoTimes run, split at the runner's chunk time. */
export function splitSummary(): string {
  if (!echoSplits.length) return '';
  const slow = [...echoSplits].sort((a, b) => b.total - a.total).slice(0, 3);
  const p = (xs: number[], q: number) => pct(xs, q).toFixed(0);
  return `  echo split at the runner's chunk time: key → chunk p50 ${p(echoSplits.map((e) => e.out), 50)} / p99 ${p(echoSplits.map((e) => e.out), 99)} ms, chunk → socket p50 ${p(echoSplits.map((e) => e.back), 50)} / p99 ${p(echoSplits.map((e) => e.back), 99)} ms; slowest keys (#index: total = out + back): ${slow.map((e) => `#${e.i}: ${e.total.toFixed(0)} = ${e.out.toFixed(0)} + ${e.back.toFixed(0)}`).join(', ')}`;
}

/** One key as the runner stamped it (runner/sessions/echo-trace.ts). */
interface RunnerKeyTrace {
  session_id: string;
  data: string;
  received: number;
  written: number;
  read: number;
  chunk: number;
  sent: number;
}

/** The stages of a key's round trip, in order: where each one ends. */
const STAGES: Array<{ name: string; end: (t: RunnerKeyTrace, e: EchoSplit) => number }> = [
  { name: 'control plane in + runner socket read', end: (t) => t.received },
  { name: 'input handled → pty.write', end: (t) => t.written },
  { name: 'pty.write → echo read', end: (t) => t.read },
  { name: 'read → chunk spooled', end: (t) => t.chunk },
  { name: 'spooled → batch on the socket', end: (t) => t.sent },
  { name: 'runner socket → viewer (control plane out)', end: (_t, e) => e.seenAt },
];

/**
 * The last echoTimes run of `sessionId`, split at the runner's own stamps (AGENT_RUNNER_BENCH_ECHO_DIR
 * = dir): each stage's p50 / p99 and the slowest keys stage by stage. Keys are matched in order by
 * their letter; a key the runner did not trace (an echo that rode in an earlier read) is skipped.
 */
export function runnerSplitSummary(dir: string, sessionId: string): string {
  if (!echoSplits.length) return '';
  const traces: RunnerKeyTrace[] = [];
  for (const f of readdirSync(dir).filter((n) => n.startsWith('echo-') && n.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      if (!line) continue;
      const t = JSON.parse(line) as RunnerKeyTrace;
      if (t.session_id === sessionId && t.received >= echoSplits[0]!.sentAt - 1 && t.received <= echoSplits.at(-1)!.seenAt) traces.push(t);
    }
  }
  traces.sort((a, b) => a.received - b.received);
  const rows: Array<{ e: EchoSplit; parts: number[] }> = [];
  let next = 0;
  for (const e of echoSplits) {
    while (next < traces.length && (traces[next]!.data !== e.key || traces[next]!.received < e.sentAt - 1)) next++;
    const t = traces[next];
    if (!t || t.received > e.seenAt) continue;
    next++;
    let from = e.sentAt;
    rows.push({ e, parts: STAGES.map((s) => { const end = s.end(t, e); const d = end - from; from = end; return d; }) });
  }
  if (!rows.length) return '  runner stages: no key was traced';
  const stageLines = STAGES.map((s, k) => `${s.name} ${[50, 90, 99].map((q) => pct(rows.map((r) => r.parts[k]!), q).toFixed(1)).join(' / ')}`);
  const slow = [...rows].sort((a, b) => b.e.total - a.e.total).slice(0, 5);
  return [
    `  runner stages of ${rows.length} of ${echoSplits.length} keys (ms, p50 / p90 / p99): ${stageLines.join('; ')}`,
    `  slowest keys stage by stage (${STAGES.length} stages as above): ${slow.map((r) => `#${r.e.i} ${r.e.total.toFixed(0)} = ${r.parts.map((x) => x.toFixed(1)).join(' + ')}`).join('; ')}`,
  ].join('\n');
}

/** A Node client of the product's /ui as the browser uses it: binary frames, acks after "parsing". */
export function avViewer(socket: UiClient, sessionId: string) {
  const listeners = new Set<(d: string, ts?: number) => void>();
  const decoder = new TextDecoder();
  // Acks in the page's steps (components/terminal/ack-scheduler.ts), as the one-hop client does.
  const acks = new AckScheduler((seq) => socket.emit('terminal:ack', { session_id: sessionId, seq }));
  socket.on('terminal:output', (raw) => {
    const f = TerminalOutputFrameSchema.safeParse(raw);
    if (!f.success || f.data.session_id !== sessionId) return;
    // Like the one-hop client, a flood's viewer only acks: decoding 100s of MB would be the bench's own cost.
    if (listeners.size) {
      const text = decoder.decode(f.data.data);
      for (const l of listeners) l(text, f.data.ts);
    }
    acks.parsed(f.data.from_seq + f.data.sizes.length - 1, f.data.data.byteLength);
  });
  return {
    // Like the page, type only once the terminal is live (its input is off until the screen is
    // painted): a key typed earlier waited for the paint, and was timed as the echo.
    attach: async () => {
      const live = new Promise<void>((resolve) => {
        const onReplayed = (b: { session_id: string }) => {
          if (b.session_id !== sessionId) return;
          socket.off('session:replayed', onReplayed);
          resolve();
        };
        socket.on('session:replayed', onReplayed);
      });
      const r = await call(socket, 'session:attach', { session_id: sessionId, snapshot: true, binary: true });
      if (!r.ok) throw new Error(r.error.message);
      await live;
    },
    send: (k: string) => socket.emit('terminal:input', { session_id: sessionId, data: k }),
    output: (cb: (d: string, ts?: number) => void) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
  };
}

export function oneHopClient(port: number) {
  const s: Socket = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], forceNew: true });
  // Acks as its page does (bench/one-hop/server.ts): every ACK_CHARS, or ACK_DELAY_MS after the first unacked.
  let unacked = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const ack = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    s.emit('ack', unacked);
    unacked = 0;
  };
  s.on('output', (d: string) => {
    unacked += d.length;
    if (unacked >= FLOW_CONTROL.ACK_CHARS) ack();
    else timer ??= setTimeout(ack, FLOW_CONTROL.ACK_DELAY_MS);
  });
  return {
    socket: s,
    ready: new Promise((r) => s.once('output', r)),
    send: (k: string) => s.emit('input', k),
    output: (cb: (d: string) => void) => {
      s.on('output', cb);
      return () => s.off('output', cb);
    },
  };
}
