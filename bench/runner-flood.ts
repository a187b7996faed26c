/**
 * The runner's CPU per MB of terminal output, end to end from the PTY to frames sent (issue 17):
 * the real runner process (runner/index.ts, as the control plane starts it) runs a shell session
 * that prints BENCH_MB of numbered lines; a fake control plane in this process decodes and
 * validates its frames like the runner namespace, acks each batch BENCH_STORE_MS (2) after it
 * arrived (the store's commit), and plays a viewer that parses BENCH_VIEWER_MBPS (8) MB/s and
 * acks for flow control as the page does (components/terminal/ack-scheduler.ts), so the PTY is
 * paused and resumed as in a real flood. Beside it, in the same invocation, the
 * one-hop baseline: a process with node-pty and socket.io-client emitting each read as it comes
 * (what wetty's server does with a PTY). CPU from /proc: the runner process by thread (main, the
 * rest = V8's GC/compiler helpers and libuv), and its session leader; the printing command is
 * not counted on either side. Rounds alternate baseline / runner, BENCH_ROUNDS (2) of each.
 *
 * Asserts nothing. Usage: npm run bench:runner   (BENCH_MB 16; BENCH_TEST_RUN=1; BENCH_CPU_PROF=DIR writes the
 * runner's .cpuprofile; BENCH_RUNNER_NODE_OPTIONS adds node flags to the runner, e.g. GC sizes:
 * variants separated by `|` each get a row per round, e.g. `|--max-semi-space-size=64`;
 * BENCH_BEFORE=DIR adds a row per round for the runner of another checkout, e.g. main's from
 * `git archive main | tar -x -C DIR` with node_modules linked in; BENCH_TRACE_GC=1 adds what the
 * runner's heap allocated and its scavenges copied per MB of the flood, from `--trace-gc-nvp`:
 * run BENCH_MB 32 or more, a young-generation collection comes every ~16 MB allocated;
 * BENCH_THREADS=1 adds the runner's helper threads one by one; BENCH_PERF=FILE records each
 * runner flood with `perf record -g` into FILE.<round>, with BENCH_RUNNER_NODE_OPTIONS=--perf-basic-prof
 * for JS names: `perf report -i FILE.0 --no-children --sort tid,sym`)
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { spawn as spawnPty } from 'node-pty';
import { Server, type Socket as ServerSocket } from 'socket.io';
import { io as connect } from 'socket.io-client';
import {
  RUNNER_FRAME_VERSION,
  RUNNER_SOCKET_PATH,
  RunnerFrameEventsSchema,
  ok,
  type RunnerEvent,
} from '../protocol';
import { createCommand, makeSampleRepo, makeTempDir, removeTempDir } from '../runner/testing/fixtures';
import { AckScheduler } from '../components/terminal/ack-scheduler';
import { descendantsByCmdline } from './live-timeline';
import { gcLines, gcSummary } from './gc-trace';

const MB = Number(process.env.BENCH_MB ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const PROF_DIR = process.env.BENCH_CPU_PROF;
const RUNNER_VARIANTS = (process.env.BENCH_RUNNER_NODE_OPTIONS ?? '').split('|').map((v) => v.split(' ').filter(Boolean));
const BEFORE_ROOT = process.env.BENCH_BEFORE;
const TRACE_GC = process.env.BENCH_TRACE_GC === '1';
const THREADS = process.env.BENCH_THREADS === '1';
/** BENCH_PERF=FILE: `perf record -g` of the runner process over each flood, into FILE.<round>. */
const PERF = process.env.BENCH_PERF;
const STORE_MS = Number(process.env.BENCH_STORE_MS ?? 2);
const VIEWER_CHARS_PER_MS = (Number(process.env.BENCH_VIEWER_MBPS ?? 8) * 1024 * 1024) / 1000;
/**
 * `seq -f %098.0f` lines: 98 digits and a newline, which the PTY turns into CR LF (100 bytes).
 * (`%098g` turned exponential past 999,999 lines, ~95 MB, and the flood's last line never came.)
 */
const LINE = 100;
const LINES = Math.ceil((MB * 1024 * 1024) / LINE);
/**
 * BENCH_TEST_RUN=1: the shell's hooks see a test command (`|| pytest` never runs), so the runner
 * also keeps the run's output tail for its summary (runner/hooks/hook-bridge.ts), as for `npm test`.
 */
const TEST_RUN = process.env.BENCH_TEST_RUN === '1';
const COMMAND = `seq -f '%098.0f' 1 ${LINES}${TEST_RUN ? '; true || pytest' : ''}`;
/** The last line, as it arrives: the flood is over when the output ends with it. */
const LAST_LINE = `${String(LINES).padStart(98, '0')}\r\n`;
const TOKEN = 'rt_bench_token';
const ROOT = join(import.meta.dirname, '..');

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

/** CPU ms by thread of a process: [main, every other thread], and each thread's by tid. */
function threadCpu(pid: number): { main: number; helpers: number; byTid: Map<number, number> } {
  let main = 0;
  let helpers = 0;
  const byTid = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(f[11]) + Number(f[12])) * 1000) / 100; // USER_HZ
      byTid.set(Number(tid), ms);
      if (tid === String(pid)) main += ms;
      else helpers += ms;
    } catch {
      // the thread ended in between
    }
  }
  return { main, helpers, byTid };
}

/**
 * BENCH_THREADS=1: the runner's helper threads one by one, ms per MB of the flood, by tid (Node 20
 * names none of its threads: every `comm` is `node`; BENCH_PERF tells what each one ran).
 */
function helperThreads(pid: number, before: Map<number, number>, after: Map<number, number>, mb: number): string {
  const rows = [...after]
    .filter(([tid]) => tid !== pid)
    .map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)] as const)
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
  return `  helper threads (tid: ms/MB): ${rows.map(([tid, ms]) => `${tid}${before.has(tid) ? '' : ' (new)'}: ${(ms / mb).toFixed(2)}`).join(', ') || 'none'}`;
}

function processCpu(pid: number): number {
  const t = threadCpu(pid);
  return t.main + t.helpers;
}

/** Resolves once `check` holds, looking at every event the server gets (no clock involved). */
class Waiters {
  private readonly list = new Set<() => boolean>();
  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => {
      const w = () => {
        if (!check()) return false;
        resolve();
        return true;
      };
      this.list.add(w);
    });
  }
  poke(): void {
    for (const w of this.list) if (w()) this.list.delete(w);
  }
}

/** The fake control plane: the runner namespace's decoding and validation, acks, a viewer that keeps up. */
class FakeControlPlane {
  readonly http = createServer();
  readonly io = new Server(this.http, { path: RUNNER_SOCKET_PATH, maxHttpBufferSize: 4 * 1024 * 1024, transports: ['websocket'] });
  readonly waiters = new Waiters();
  runner: ServerSocket | null = null;
  registered = false;
  events: RunnerEvent[] = [];
  outputChars = 0;
  tail = '';
  /** What the runner's frames looked like: counted per round. */
  frames = 0;
  chunks = 0;
  /** The viewer: busy parsing until this time (performance.now()). */
  private viewerBusyUntil = 0;
  private acks: AckScheduler | null = null;
  /** One-hop: characters received and whether its command exited. */
  oneHopChars = 0;
  oneHopDone = false;

  async listen(): Promise<string> {
    this.io.of('/runner').on('connection', (socket) => {
      this.runner = socket;
      socket.on('runner:register', (_body, ack) => {
        ack(ok({ runner_id: 'runner_bench', org_id: 'org_test', heartbeat_ms: 10_000, frames: RUNNER_FRAME_VERSION }));
        this.registered = true;
        this.waiters.poke();
      });
      socket.on('runner:heartbeat', (_body, ack) => ack(ok({ ts: Date.now() })));
      socket.on('runner:frame', (frame, ack) => {
        const parsed = RunnerFrameEventsSchema.safeParse(frame);
        if (!parsed.success) throw new Error(`bad frame: ${parsed.error.message}`);
        this.frames++;
        const highest = new Map<string, number>();
        for (const e of parsed.data) {
          highest.set(e.session_id, e.seq);
          if (e.type === 'TERMINAL_CHUNK') {
            this.chunks++;
            this.outputChars += e.data.length;
            this.tail = (this.tail + e.data).slice(-LAST_LINE.length * 2);
            this.view(socket, e.session_id, e.seq, e.data.length);
          } else {
            this.events.push(e);
          }
        }
        const acked = [...highest].map(([session_id, seq]) => ({ session_id, seq }));
        setTimeout(() => ack(ok({ acked })), STORE_MS);
        this.waiters.poke();
      });
    });
    this.io.of('/onehop').on('connection', (socket) => {
      socket.on('output', (d: string) => {
        this.oneHopChars += d.length;
        this.waiters.poke();
      });
      socket.on('exit', () => {
        this.oneHopDone = true;
        this.waiters.poke();
      });
    });
    await new Promise<void>((r) => this.http.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  /** The viewer parses the chunk once it is through what it already had, then acks like the page. */
  private view(socket: ServerSocket, sessionId: string, seq: number, chars: number): void {
    const acks = (this.acks ??= new AckScheduler((s) => socket.emit('terminal:ack', { session_id: sessionId, seq: s })));
    const now = performance.now();
    this.viewerBusyUntil = Math.max(now, this.viewerBusyUntil) + chars / VIEWER_CHARS_PER_MS;
    setTimeout(() => acks.parsed(seq, chars), this.viewerBusyUntil - now);
  }

  newRound(): void {
    this.acks?.dispose();
    this.acks = null;
    this.frames = 0;
    this.chunks = 0;
  }

  command(name: string, body: unknown): Promise<unknown> {
    return this.runner!.timeout(30_000).emitWithAck(name, body);
  }

  async close(): Promise<void> {
    this.io.close();
    await new Promise((r) => this.http.close(r));
  }
}

interface Figure {
  mb: number;
  seconds: number;
  main: number;
  helpers: number;
  /** The session leader's CPU ms (null: none, the one-hop). */
  leader: number | null;
  /** How the output was cut into frames and chunks (the runner). */
  shape?: string;
  /** BENCH_TRACE_GC: the runner's collections during the flood (gc-trace.ts). */
  gc?: string;
  /** BENCH_THREADS: the helper threads one by one. */
  threads?: string;
}

const exited = (child: ChildProcess) => new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));

async function runnerRound(cp: FakeControlPlane, url: string, tmp: string, round: number, nodeOptions: string[], root = ROOT): Promise<Figure> {
  const source = makeSampleRepo(join(tmp, `source-${round}`));
  const child = spawn(
    process.execPath,
    [
      ...(PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`] : []),
      ...nodeOptions,
      ...(TRACE_GC ? [`--import=${join(ROOT, 'bench/trace-gc.mjs')}`] : []),
      '--import', 'tsx', join(root, 'runner/index.ts'), '--server', url, '--name', 'bench', '--data-dir', join(tmp, `data-${round}`),
    ],
    { cwd: root, env: { PATH: process.env.PATH, HOME: tmp, LANG: 'C.UTF-8', NODE_ENV: process.env.NODE_ENV, AGENT_RUNNER_TOKEN: TOKEN, AGENT_RUNNER_SANDBOX: 'off' }, stdio: TRACE_GC ? ['ignore', 'pipe', 'ignore'] : process.env.BENCH_DEBUG ? ['ignore', 'inherit', 'inherit'] : 'ignore' },
  );
  const logs: string[] = [];
  child.stdout?.setEncoding('utf8').on('data', (d: string) => logs.push(d));
  try {
    cp.registered = false;
    await cp.waiters.until(() => cp.registered);
    const cmd = createCommand({ repo_source: source });
    await cp.command('session:create', cmd);
    await cp.waiters.until(() => cp.events.some((e) => e.type === 'SESSION_STATE_CHANGED' && e.session_id === cmd.session_id && e.to === 'RUNNING'));
    // The shell's prompt is out; start counting from here.
    await new Promise((r) => setTimeout(r, 500));
    cp.newRound();
    const leader = descendantsByCmdline(child.pid!, (c) => c.includes('session-leader'))[0];
    const chars0 = cp.outputChars;
    const cpu0 = threadCpu(child.pid!);
    const logsFrom = logs.length;
    const leader0 = leader ? processCpu(leader) : 0;
    const perf = PERF ? spawn('perf', ['record', '-F', '999', '-g', '-p', String(child.pid), '-o', `${PERF}.${round}`], { stdio: 'ignore' }) : null;
    const t0 = performance.now();
    await cp.command('session:input', { session_id: cmd.session_id, data: COMMAND, mode: 'line' });
    await cp.waiters.until(() => cp.tail.includes(LAST_LINE));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = threadCpu(child.pid!);
    if (perf) await new Promise((resolve) => perf.once('exit', resolve).kill('SIGINT'));
    const logsTo = logs.length;
    const leaderMs = leader ? processCpu(leader) - leader0 : null;
    const mb = (cp.outputChars - chars0) / 1024 / 1024;
    const gc = TRACE_GC ? gcSummary(gcLines(logs.slice(0, logsTo), child.pid!, logsFrom), [], mb) : undefined;
    await cp.command('session:stop', { session_id: cmd.session_id });
    const shape = `${cp.frames} frames, ${cp.chunks} chunks (${((cp.outputChars - chars0) / Math.max(1, cp.chunks) / 1024).toFixed(1)} KB each)`;
    const threads = THREADS ? helperThreads(child.pid!, cpu0.byTid, cpu.byTid, mb) : undefined;
    return { mb, seconds, main: cpu.main - cpu0.main, helpers: cpu.helpers - cpu0.helpers, leader: leaderMs, shape, gc, threads };
  } finally {
    child.kill('SIGTERM');
    await exited(child);
    cp.tail = '';
  }
}

async function oneHopRound(cp: FakeControlPlane, url: string): Promise<Figure> {
  cp.oneHopChars = 0;
  cp.oneHopDone = false;
  const child = fork(process.argv[1]!, ['one-hop', url], { execArgv: process.execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    await new Promise<void>((r) => child.once('message', () => r()));
    const cpu0 = threadCpu(child.pid!);
    const t0 = performance.now();
    child.send('go');
    await cp.waiters.until(() => cp.oneHopDone);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = threadCpu(child.pid!);
    return { mb: cp.oneHopChars / 1024 / 1024, seconds, main: cpu.main - cpu0.main, helpers: cpu.helpers - cpu0.helpers, leader: null };
  } finally {
    child.kill('SIGTERM');
    await exited(child);
  }
}

/** The baseline process: node-pty + socket.io-client, each read emitted at once (wetty's server). */
async function oneHop(url: string): Promise<void> {
  const socket = connect(`${url}/onehop`, { path: RUNNER_SOCKET_PATH, transports: ['websocket'] });
  await new Promise<void>((r) => socket.once('connect', () => r()));
  process.send!('ready');
  await new Promise<void>((r) => process.once('message', () => r()));
  const pty = spawnPty('bash', ['--norc', '--noprofile', '-c', COMMAND], { name: 'xterm-256color', cols: 100, rows: 30, env: { PATH: process.env.PATH!, LANG: 'C.UTF-8' } });
  pty.onData((d) => socket.emit('output', d));
  pty.onExit(() => socket.emit('exit'));
}

function row(what: string, f: Figure): string {
  const perMb = (ms: number) => (ms / f.mb).toFixed(1);
  return `| ${what} | ${(f.mb / f.seconds).toFixed(1)} | **${perMb(f.main + f.helpers)}** | ${perMb(f.main)} | ${perMb(f.helpers)} | ${f.leader === null ? '—' : perMb(f.leader)} | ${f.shape ?? '—'} | ${load()} |${f.gc ? `\n${f.gc}` : ''}${f.threads ? `\n${f.threads}` : ''}`;
}

if (process.argv[2] === 'one-hop') {
  await oneHop(process.argv[3]!);
} else {
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}; load ${load()}`);
  console.log(`${MB} MB of numbered lines (${COMMAND})`);
  console.log(`fake control plane: batches acked ${STORE_MS} ms after arrival; the viewer parses ${(VIEWER_CHARS_PER_MS / 1048.576).toFixed(1)} MB/s`);
  console.log('| process | MB/s | CPU ms per MB | main thread | other threads | session leader | frames | load (1/5/15 min) |');
  console.log('|---|---|---|---|---|---|---|---|');
  const tmp = await makeTempDir('bench-runner-flood');
  const cp = new FakeControlPlane();
  const url = await cp.listen();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      console.log(row('one-hop: node-pty + socket.io-client (baseline)', await oneHopRound(cp, url)));
      if (BEFORE_ROOT) console.log(row(`runner of ${BEFORE_ROOT} (before)`, await runnerRound(cp, url, tmp, 1000 + round, RUNNER_VARIANTS[0]!, BEFORE_ROOT)));
      for (const [i, options] of RUNNER_VARIANTS.entries()) {
        const figure = await runnerRound(cp, url, tmp, round * RUNNER_VARIANTS.length + i, options);
        console.log(row(`runner: PTY → batch → redact → spool → frames${options.length ? ` (${options.join(' ')})` : ''}`, figure));
      }
    }
  } finally {
    await cp.close();
    await removeTempDir(tmp);
  }
  console.log(`load at the end: ${load()}`);
}
