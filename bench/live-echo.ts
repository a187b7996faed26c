/**
 * The echo half of bench:live (bench/terminal-live.ts): socket clients of the product's /ui and of
 * the one-hop baseline that ack as their pages do, and key → echo timing with each slow key split
 * at the runner's chunk time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { io, type Socket } from 'socket.io-client';
import { AckScheduler } from '../components/terminal/ack-scheduler';
import { FLOW_CONTROL, TerminalOutputFrameSchema } from '../protocol';
import { call, type UiClient } from '../server/integration/harness';
import { startTsWorker } from '../server/ts-worker';
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
let echoTimesMs: number[] = [];
/**
 * The event-loop delay of the thread that ran the last echoTimes run (the measured viewer's,
 * measuredViewer): a late loop adds to the stage that ends when the echo is seen, without being
 * the product's.
 */
let viewerLoop = { p99: 0, max: 0 };

/**
 * Type one key at a time and time until its echo comes back. Outputs that carry the runner's
 * chunk time (`ts`, same machine clock) also record the split, so the slow keys say which way
 * they were slow (echoSplits, printed by splitSummary).
 */
export async function echoTimes(keys: number, send: (k: string) => void, output: (cb: (d: string, ts?: number) => void) => () => void): Promise<number[]> {
  const times: number[] = (echoTimesMs = []);
  echoSplits.length = 0;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
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
  loop.disable();
  viewerLoop = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
  return times;
}

/** What an echoTimes run left: its times, its splits, and its thread's loop delay (sent back by a measured viewer's thread). */
export interface EchoRun {
  times: number[];
  splits: EchoSplit[];
  loop: { p99: number; max: number };
}

export function lastEchoRun(): EchoRun {
  return { times: echoTimesMs, splits: [...echoSplits], loop: viewerLoop };
}

/** A run made on another thread becomes the last run here (splitSummary, runnerSplitSummary). */
function adoptEchoRun(run: EchoRun): number[] {
  echoSplits.splice(0, echoSplits.length, ...run.splits);
  viewerLoop = run.loop;
  return (echoTimesMs = run.times);
}

export type MeasuredViewerOptions = BaselineTarget | { kind: 'av'; url: string; cookie: string; sessionId: string };
export type MeasuredViewerRequest = { kind: 'attach' } | { kind: 'keys'; keys: number } | { kind: 'close' };
type MeasuredViewerAnswer = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * The viewer whose echo is timed, on a thread of its own (live-echo-viewer.ts): the bench's main
 * thread reads every other viewer's socket, the floods' included, and an echo waiting for that
 * loop is the bench's wait, not the product's (a person's tab does not read other people's
 * floods). Requests are answered in order.
 */
export async function measuredViewer(opts: MeasuredViewerOptions) {
  const worker = startTsWorker(new URL('./live-echo-viewer.ts', import.meta.url), { workerData: opts });
  const waiting: Array<{ resolve: (v: unknown) => void; reject: (e: Error) => void }> = [];
  worker.on('message', (a: MeasuredViewerAnswer) => {
    const w = waiting.shift();
    if (a.ok) w?.resolve(a.value);
    else w?.reject(new Error(a.error));
  });
  worker.on('error', (err) => waiting.splice(0).forEach((w) => w.reject(err)));
  const answer = () => new Promise<unknown>((resolve, reject) => waiting.push({ resolve, reject }));
  const ask = (req: MeasuredViewerRequest) => {
    const a = answer();
    worker.postMessage(req);
    return a;
  };
  await answer(); // connected (and a baseline's prompt seen)
  return {
    attach: async () => void (await ask({ kind: 'attach' })),
    times: async (keys: number) => adoptEchoRun((await ask({ kind: 'keys', keys })) as EchoRun),
    /** Closes its socket and ends the thread (stopped after a second if it does not end by itself). */
    close: async () => {
      const ended = new Promise((r) => worker.once('exit', r));
      worker.postMessage({ kind: 'close' } satisfies MeasuredViewerRequest);
      const stop = setTimeout(() => void worker.terminate(), 1_000);
      await ended;
      clearTimeout(stop);
    },
  };
}

/** The slowest keys of the last echoTimes run, split at the runner's chunk time. */
export function splitSummary(): string {
  if (!echoSplits.length) return '';
  const slow = [...echoSplits].sort((a, b) => b.total - a.total).slice(0, 3);
  const p = (xs: number[], q: number) => pct(xs, q).toFixed(0);
  return `  echo split at the runner's chunk time: key → chunk p50 ${p(echoSplits.map((e) => e.out), 50)} / p99 ${p(echoSplits.map((e) => e.out), 99)} ms, chunk → socket p50 ${p(echoSplits.map((e) => e.back), 50)} / p99 ${p(echoSplits.map((e) => e.back), 99)} ms; slowest keys (#index: total = out + back): ${slow.map((e) => `#${e.i}: ${e.total.toFixed(0)} = ${e.out.toFixed(0)} + ${e.back.toFixed(0)}`).join(', ')}; the first keys: ${echoSplits.slice(0, 8).map((e) => e.total.toFixed(0)).join(', ')} ms; the measured viewer's event-loop delay p99 ${viewerLoop.p99.toFixed(1)} / max ${viewerLoop.max.toFixed(1)} ms`;
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
  /** Bytes on the runner's socket not yet written when the echo's batch was sent. */
  queued?: number;
}

/** One key as the control plane stamped it (server/realtime/key-trace.ts). */
interface ControlPlaneKeyTrace {
  session_id: string;
  data: string;
  received: number;
  forwarded: number;
  fanned_out: number;
}

type Stamps = { runner: RunnerKeyTrace; cp?: ControlPlaneKeyTrace };

/**
 * The stages of a key's round trip, in order: where each one ends. `with: 'cp'` stages split the
 * control plane's part when it wrote its stamps; `with: 'runner'` ones stand for them otherwise.
 */
const STAGES: Array<{ name: string; with?: 'cp' | 'runner'; end: (t: Stamps, e: EchoSplit) => number }> = [
  { name: 'viewer socket → control plane handler', with: 'cp', end: (t) => t.cp!.received },
  { name: 'control plane handler → runner socket', with: 'cp', end: (t) => t.cp!.forwarded },
  { name: 'runner socket read', with: 'cp', end: (t) => t.runner.received },
  { name: 'control plane in + runner socket read', with: 'runner', end: (t) => t.runner.received },
  { name: 'input handled → pty.write', end: (t) => t.runner.written },
  { name: 'pty.write → echo read', end: (t) => t.runner.read },
  { name: 'read → chunk spooled', end: (t) => t.runner.chunk },
  { name: 'spooled → batch on the socket', end: (t) => t.runner.sent },
  { name: 'runner socket → control plane fan-out', with: 'cp', end: (t) => t.cp!.fanned_out },
  { name: 'fan-out → viewer', with: 'cp', end: (_t, e) => e.seenAt },
  { name: 'runner socket → viewer (control plane out)', with: 'runner', end: (_t, e) => e.seenAt },
];

/** Every line of the `<prefix>*.jsonl` files in `dir` for `sessionId` stamped between `from` and `to`, by `received`. */
function tracesOf<T extends { session_id: string; received: number }>(dir: string, prefix: string, sessionId: string, from: number, to: number): T[] {
  const out: T[] = [];
  for (const f of readdirSync(dir).filter((n) => n.startsWith(prefix) && n.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      if (!line) continue;
      const t = JSON.parse(line) as T;
      if (t.session_id === sessionId && t.received >= from && t.received <= to) out.push(t);
    }
  }
  return out.sort((a, b) => a.received - b.received);
}

/** The first trace at or after `next` for `key` stamped inside the key's round trip (advancing `next`), or undefined. */
function matchKey<T extends { data: string; received: number }>(traces: T[], cursor: { next: number }, e: EchoSplit): T | undefined {
  while (cursor.next < traces.length && (traces[cursor.next]!.data !== e.key || traces[cursor.next]!.received < e.sentAt - 1)) cursor.next++;
  const t = traces[cursor.next];
  if (!t || t.received > e.seenAt) return undefined;
  cursor.next++;
  return t;
}

/**
 * The last echoTimes run of `sessionId`, split at the runner's own stamps (AGENT_RUNNER_BENCH_ECHO_DIR
 * = dir) and, when it wrote them, the control plane's (AGENT_VILLAGE_BENCH_ECHO_DIR = dir): each
 * stage's p50 / p99 and the slowest keys stage by stage. Keys are matched in order by their letter;
 * a key the runner did not trace (an echo that rode in an earlier read) is skipped.
 */
export function runnerSplitSummary(dir: string, sessionId: string): string {
  if (!echoSplits.length) return '';
  const from = echoSplits[0]!.sentAt - 1;
  const to = echoSplits.at(-1)!.seenAt;
  const runner = tracesOf<RunnerKeyTrace>(dir, 'echo-', sessionId, from, to);
  const cp = tracesOf<ControlPlaneKeyTrace>(dir, 'cp-', sessionId, from, to);
  const withCp = cp.length > 0;
  const stages = STAGES.filter((s) => s.with === undefined || s.with === (withCp ? 'cp' : 'runner'));
  const rows: Array<{ e: EchoSplit; parts: number[]; queued: number }> = [];
  const rc = { next: 0 };
  const cc = { next: 0 };
  for (const e of echoSplits) {
    const c = withCp ? matchKey(cp, cc, e) : undefined;
    const t = matchKey(runner, rc, e);
    if (!t || (withCp && !c)) continue;
    let at = e.sentAt;
    const parts = stages.map((s) => {
      const end = s.end({ runner: t, cp: c }, e);
      const d = end - at;
      at = end;
      return d;
    });
    rows.push({ e, parts, queued: t.queued ?? 0 });
  }
  if (!rows.length) return '  runner stages: no key was traced';
  const stageLines = stages.map((s, k) => `${s.name} ${[50, 90, 99].map((q) => pct(rows.map((r) => r.parts[k]!), q).toFixed(1)).join(' / ')}`);
  const slow = [...rows].sort((a, b) => b.e.total - a.e.total).slice(0, 5);
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
  return [
    `  ${withCp ? 'control plane and runner' : 'runner'} stages of ${rows.length} of ${echoSplits.length} keys (ms, p50 / p90 / p99): ${stageLines.join('; ')}`,
    `  bytes on the runner's socket ahead of the echo: p50 ${kb(pct(rows.map((r) => r.queued), 50))} / p99 ${kb(pct(rows.map((r) => r.queued), 99))}`,
    `  slowest keys stage by stage (${stages.length} stages as above; socket backlog): ${slow.map((r) => `#${r.e.i} ${r.e.total.toFixed(0)} = ${r.parts.map((x) => x.toFixed(1)).join(' + ')} (${kb(r.queued)})`).join('; ')}`,
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
  return stringClient(s, 'output');
}

/** wetty's page acks ("commit") in whole steps of this many characters (its client's FlowControlClient). */
const WETTY_ACK_CHARS = 262_144;

/**
 * A Node client of wetty 3.2 (bench/live-wetty.ts) as its page uses it: output comes as `data`
 * strings, keys go as `input`, and every WETTY_ACK_CHARS received are committed. Its server starts
 * a shell per connection.
 */
export function wettyClient(port: number, path: string) {
  const s: Socket = io(`http://127.0.0.1:${port}`, { path, transports: ['websocket'], forceNew: true });
  let counter = 0;
  s.on('data', (d: string) => {
    counter += d.length;
    if (counter >= WETTY_ACK_CHARS) {
      counter -= WETTY_ACK_CHARS;
      s.emit('commit', WETTY_ACK_CHARS);
    }
  });
  return stringClient(s, 'data');
}

/** What both baselines' clients offer: output as strings on one event, keys sent as `input`. */
function stringClient(s: Socket, event: string) {
  return {
    socket: s,
    ready: new Promise((r) => s.once(event, r)),
    send: (k: string) => s.emit('input', k),
    output: (cb: (d: string) => void) => {
      s.on(event, cb);
      return () => s.off(event, cb);
    },
  };
}

/** A client of either baseline: the one-hop server or wetty. */
export type BaselineClient = ReturnType<typeof oneHopClient>;
export type BaselineTarget = { kind: 'one-hop'; port: number } | { kind: 'wetty'; port: number; path: string };
export const baselineClient = (t: BaselineTarget): BaselineClient => (t.kind === 'one-hop' ? oneHopClient(t.port) : wettyClient(t.port, t.path));
