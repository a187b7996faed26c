/**
 * Where a flood's bytes wait, hop by hop and over time (bench:live BENCH_PIPE=DIR). Four logs are
 * lined up by Date.now():
 *   - the runner's flow control (runner/pty/flow-control.ts, AGENT_RUNNER_BENCH_FLOW_DETAIL=1):
 *     each chunk spooled, each viewer ack it applied, each pause and resume;
 *   - the runner's and the control plane's socket.io messages (bench/live-pipe.mjs, preloaded):
 *     frames sent and received, storage acks, viewer frames, flow-control acks;
 *   - the page (pipeInitScript, and armThroughput's wrappers): frames arrived, handed to xterm,
 *     parsed, acks sent.
 * From their running totals, at the end of each bucket: how many bytes sit in each stretch of the
 * pipe (spool → runner socket → control plane → browser socket → write pacer → xterm → ack), how
 * long the PTY was paused and xterm had nothing to parse. The stretch that holds the window while
 * the page starves is the stall.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXPRESS_BATCH_CHARS, MAX_IN_FLIGHT_BATCHES } from '../runner/spool/sender';

/** BENCH_PIPE=DIR: log the pipe (see above) and print its time-line after each product run. */
export const PIPE_DIR = process.env.BENCH_PIPE;
/** One row of the time-line per this many ms. */
const BUCKET_MS = Number(process.env.BENCH_PIPE_BUCKET_MS ?? 250);

/** The page's side, in Date.now() ms: frames arrived, writes handed to xterm, writes parsed, acks sent. */
export interface PagePipe {
  arrived: Array<[number, number]>;
  written: Array<[number, number]>;
  parsed: Array<[number, number]>;
  acks: Array<[number, number]>;
}

/**
 * Runs in the product's page before its scripts (context.addInitScript): every binary websocket
 * message is logged as it is dispatched to the page (engine.io's own handler runs after this one).
 * A string, not a function: tsx's keepNames would wrap a function's inner names in a __name the page lacks.
 */
export const PIPE_INIT_SCRIPT = `(() => {
  const pipe = { arrived: [], written: [], parsed: [], acks: [] };
  window.__pipe = pipe;
  const Base = window.WebSocket;
  window.WebSocket = class extends Base {
    constructor(url, protocols) {
      super(url, protocols);
      this.addEventListener('message', (ev) => {
        if (typeof ev.data !== 'string') pipe.arrived.push([performance.timeOrigin + performance.now(), ev.data.byteLength]);
      });
    }
  };
})();`;

interface Row {
  t: number;
  side: 'runner' | 'ui';
  dir: 'in' | 'out';
  ev?: string;
  id?: number;
  ack?: number;
  chunks?: Array<[number, number]>;
  from?: number;
  sizes?: number[];
  seq?: number;
}

const readRows = <T>(dir: string, match: (name: string) => boolean): T[] =>
  readdirSync(dir)
    .filter(match)
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as T));

/**
 * The stretches of the pipe, as the time-line's columns: the runner's whole flow-control window,
 * then its parts in order (unstored is beside the live path: what the control plane has not
 * stored yet holds the runner's sender, not the viewers).
 */
const STRETCHES = ['window', 'spool', 'runner→cp', 'cp-unstored', 'cp-held', 'cp→page', 'pacer', 'xterm', 'ack-due'];

/** Running totals of bytes past each point of the pipe: [t, bytes] steps, in time order. */
type Steps = Array<[number, number]>;

function sumUntil(steps: Steps, t: number): number {
  let n = 0;
  for (const [at, b] of steps) if (at <= t) n += b;
  return n;
}

/** Milliseconds of [a, b] inside the stretches [from, to]. */
function overlap(stretches: Array<[number, number]>, a: number, b: number): number {
  let ms = 0;
  for (const [from, to] of stretches) ms += Math.max(0, Math.min(to, b) - Math.max(from, a));
  return ms;
}

/**
 * The time-line's lines for the run [t0, t1] (Date.now()): counted from `from` (before the flood,
 * when the pipe was empty) so each level is what sits in its stretch.
 */
export function pipeReport(pipeDir: string, flowDir: string, page: PagePipe, t0: number, t1: number): string[] {
  const from = t0 - 1_000;
  const inRun = (t: number) => t >= from && t <= t1;
  const flow = readRows<{ t: number; paused?: boolean; chunk?: number; acked?: number; backlog: number }>(flowDir, (n) => n.startsWith('flow-'));
  const runnerRows = readRows<Row>(pipeDir, (n) => n.startsWith('pipe-runner-')).filter((r) => inRun(r.t));
  const serverRows = readRows<Row>(pipeDir, (n) => n.startsWith('pipe-server-')).filter((r) => inRun(r.t));

  const chunkBytes = (r: Row) => (r.chunks ?? []).reduce((n, [, b]) => n + b, 0);
  // Spooled: the runner's flow control counts each chunk as it is spooled.
  const spooled: Steps = flow.filter((r) => r.chunk !== undefined && inRun(r.t)).map((r) => [r.t, r.chunk!]);
  const runnerSent: Steps = runnerRows.filter((r) => r.ev === 'runner:frame' && r.dir === 'out').map((r) => [r.t, chunkBytes(r)]);
  const framesIn = serverRows.filter((r) => r.ev === 'runner:frame' && r.dir === 'in');
  const cpIn: Steps = framesIn.map((r) => [r.t, chunkBytes(r)]);
  const byId = new Map(framesIn.filter((r) => r.id !== undefined).map((r) => [r.id!, chunkBytes(r)]));
  const stored: Steps = serverRows.filter((r) => r.side === 'runner' && r.dir === 'out' && r.ack !== undefined && byId.has(r.ack)).map((r) => [r.t, byId.get(r.ack!)!]);
  const toPage = serverRows.filter((r) => r.side === 'ui' && r.dir === 'out' && r.ev === 'terminal:output');
  const cpOut: Steps = toPage.map((r) => [r.t, (r.sizes ?? []).reduce((a, b) => a + b, 0)]);
  // A page ack's seq in bytes: the bytes of every chunk sent to it through that seq.
  const through: Array<[number, number]> = [];
  let cum = 0;
  for (const r of toPage) (r.sizes ?? []).forEach((s, i) => through.push([r.from! + i, (cum += s)]));
  const bytesThrough = (seq: number) => {
    let b = 0;
    for (const [s, c] of through) if (s <= seq) b = c;
    return b;
  };
  const acks = serverRows.filter((r) => r.side === 'ui' && r.dir === 'in' && r.ev === 'terminal:ack');
  const pageAcked: Steps = [];
  let ackedSoFar = 0;
  for (const r of acks) {
    const b = bytesThrough(r.seq!);
    if (b > ackedSoFar) pageAcked.push([r.t, b - ackedSoFar]);
    ackedSoFar = Math.max(ackedSoFar, b);
  }
  const runnerAcks = flow.filter((r) => r.acked !== undefined && inRun(r.t));
  const ackedBase = flow.filter((r) => r.acked !== undefined && r.t < from).at(-1)?.acked ?? runnerAcks[0]?.acked ?? 0;
  const runnerAcked: Steps = [];
  let last = ackedBase;
  for (const r of runnerAcks) {
    runnerAcked.push([r.t, r.acked! - last]);
    last = r.acked!;
  }
  const inPage = (xs: Array<[number, number]>) => xs.filter(([t]) => inRun(t));
  const arrived = inPage(page.arrived);
  const written = inPage(page.written);
  const parsed = inPage(page.parsed);

  // Stretches: PTY paused; xterm with nothing to parse.
  const paused: Array<[number, number]> = [];
  let since: number | null = null;
  for (const r of flow.filter((x) => typeof x.paused === 'boolean')) {
    if (r.paused && since === null) since = r.t;
    else if (!r.paused && since !== null) (paused.push([since, r.t]), (since = null));
  }
  if (since !== null) paused.push([since, t1]);
  // The runner's sender at its cap (MAX_IN_FLIGHT_BATCHES regular batches waiting to be stored)
  // while output waits in the spool: the live path waiting on the database.
  const capped: Array<[number, number]> = [];
  {
    const big = new Set(framesIn.filter((r) => chunkBytes(r) > EXPRESS_BATCH_CHARS && r.id !== undefined).map((r) => r.id!));
    const marks: Array<[number, number, number]> = [
      ...runnerRows.filter((r) => r.ev === 'runner:frame' && r.dir === 'out').map((r): [number, number, number] => [r.t, chunkBytes(r) > EXPRESS_BATCH_CHARS ? 1 : 0, -chunkBytes(r)]),
      ...serverRows.filter((r) => r.side === 'runner' && r.dir === 'out' && r.ack !== undefined && big.has(r.ack)).map((r): [number, number, number] => [r.t, -1, 0]),
      ...spooled.map(([t, b]): [number, number, number] => [t, 0, b]),
    ].sort((x, y) => x[0] - y[0]);
    let inFlight = 0;
    let waiting = 0;
    let from: number | null = null;
    for (const [t, d, b] of marks) {
      inFlight = Math.max(0, inFlight + d);
      waiting = Math.max(0, waiting + b);
      const at = inFlight >= MAX_IN_FLIGHT_BATCHES && waiting > 0;
      if (at && from === null) from = t;
      else if (!at && from !== null) (capped.push([from, t]), (from = null));
    }
    if (from !== null) capped.push([from, t1]);
  }
  const starved: Array<[number, number]> = [];
  const marks = [...written.map(([t]) => [t, 1] as const), ...parsed.map(([t]) => [t, -1] as const)].sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let pending = 0;
  let idleFrom: number = t0;
  for (const [t, d] of marks) {
    if (pending === 0 && d === 1 && t > t0) starved.push([Math.max(idleFrom, t0), t]);
    pending += d;
    if (pending === 0) idleFrom = t;
  }
  if (pending === 0) starved.push([Math.max(idleFrom, t0), t1]);

  const kb = (n: number) => (n / 1024).toFixed(0).padStart(5);
  const lines = [`  pipe time-line (BENCH_PIPE), KB in each stretch at the end of each ${BUCKET_MS} ms (t from the page's first byte):`];
  /** Bytes in each stretch at time t, in STRETCHES order. */
  const levels = (t: number): number[] => {
    const [S, R, C, D, E, F, G, H, I, J] = [spooled, runnerSent, cpIn, stored, cpOut, arrived, written, parsed, pageAcked, runnerAcked].map((x) => sumUntil(x, t));
    return [S! - J!, S! - R!, R! - C!, C! - D!, C! - E!, E! - F!, F! - G!, G! - H!, H! - I!];
  };
  const row = (xs: number[]) => xs.map((n, i) => kb(n).padStart(STRETCHES[i]!.length)).join(' ');
  lines.push(`      t  PTY-paused  xterm-idle  sender-capped | ${STRETCHES.join(' ')} | KB/s into xterm`);
  for (let a = Math.floor((t0 - from) / BUCKET_MS) * BUCKET_MS + from; a < t1; a += BUCKET_MS) {
    const b = Math.min(a + BUCKET_MS, t1);
    const rate = ((sumUntil(parsed, b) - sumUntil(parsed, a)) / 1024 / ((b - a) / 1000)).toFixed(0);
    lines.push(
      `  ${String(a - t0).padStart(6)} ${String(Math.round(overlap(paused, a, b))).padStart(6)} ms ${String(Math.round(overlap(starved, a, b))).padStart(7)} ms ${String(Math.round(overlap(capped, a, b))).padStart(8)} ms | ${row(levels(b))} | ${rate.padStart(6)}`,
    );
  }
  // Who holds the window when the PTY stops: the stretches at each pause, averaged.
  const atPauses = paused.filter(([p]) => p >= t0 && p <= t1).map(([p]) => levels(p));
  if (atPauses.length) {
    const mean = STRETCHES.map((_, i) => atPauses.reduce((n, l) => n + l[i]!, 0) / atPauses.length);
    lines.push(`    at the PTY's ${atPauses.length} pauses, on average:  ${' '.repeat(20)}| ${row(mean)} |`);
  }
  const total = t1 - t0;
  lines.push(
    `    PTY paused ${(overlap(paused, t0, t1) / 1000).toFixed(2)} s, sender at its cap of ${MAX_IN_FLIGHT_BATCHES} unstored batches with output spooled ${(overlap(capped, t0, t1) / 1000).toFixed(2)} s, xterm idle ${(overlap(starved, t0, t1) / 1000).toFixed(2)} s of ${(total / 1000).toFixed(2)} s; ` +
      `${framesIn.length} runner frames (${kb(sumUntil(cpIn, t1) / Math.max(1, framesIn.length)).trim()} KB each), ${toPage.length} page frames, ${acks.length} page acks, ${runnerAcks.length} acks applied by the runner`,
  );
  const lat = (xs: Steps, ys: Steps) => {
    // Delay of each byte between two points of the pipe: the time the same running total was reached.
    const out: number[] = [];
    let j = 0;
    let cy = 0;
    let cx = 0;
    for (const [t, b] of xs) {
      cx += b;
      while (j < ys.length && cy < cx) cy += ys[j++]![1];
      if (cy >= cx && j > 0) out.push(ys[j - 1]![0] - t);
    }
    out.sort((p, q) => p - q);
    return out.length ? `p50 ${out[out.length >> 1]!.toFixed(0)} / max ${out.at(-1)!.toFixed(0)} ms` : 'n/a';
  };
  lines.push(
    `    hop delays (same running total reached): spooled → sent ${lat(spooled, runnerSent)}; sent → at control plane ${lat(runnerSent, cpIn)}; ` +
      `at control plane → stored ${lat(cpIn, stored)}; → sent to page ${lat(cpIn, cpOut)}; → arrived in page ${lat(cpOut, arrived)}; ` +
      `→ handed to xterm ${lat(arrived, written)}; → parsed ${lat(written, parsed)}; → acked by page ${lat(parsed, pageAcked)}; → ack applied by runner ${lat(pageAcked, runnerAcked)}`,
  );
  return lines;
}
