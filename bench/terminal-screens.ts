/**
 * Terminal figures that need no browser: key → echo latency at the socket (Agent Village's two
 * hops vs a one-hop socket.io + node-pty baseline it starts itself), reattach time and bytes
 * after 64 KB and after BENCH_MB of output, and time-travel seek time. Prints; asserts nothing.
 * Usage: npm run bench:screens   (needs a build: `npx next build`; BENCH_SNAPSHOT_KB sets the
 *        control plane's AGENT_VILLAGE_TERMINAL_SNAPSHOT_KB, the reattach snapshot interval)
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { connectDb } from '../server/db';
import xtermHeadless from '@xterm/headless';
import { io, type Socket } from 'socket.io-client';
import type { Result, TerminalScreen, TerminalTimeline, WireEvent } from '../protocol';
import { Api, call, ROOT, startStack, TerminalWatcher, uiSocket, type UiClient } from '../server/integration/harness';

const { Terminal } = xtermHeadless;
const ECHO_KEYS = 200;
const SEEKS = 20;
const BIG_MB = Number(process.env.BENCH_MB ?? 64);
const SNAPSHOT_KB = process.env.BENCH_SNAPSHOT_KB;
/** A seek slower than this counts as failed (a safety net, not a target). */
const SEEK_GUARD_MS = 120_000;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms / p99 ${pct(xs, 99).toFixed(1)} ms`;

/** Type one key at a time and time until its echo comes back. */
async function echoTimes(send: (k: string) => void, onOutput: (cb: (d: string) => void) => () => void): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < ECHO_KEYS; i++) {
    const key = String.fromCharCode(97 + (i % 26));
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      const off = onOutput((d) => {
        if (d.includes(key)) {
          off();
          resolve();
        }
      });
      send(key);
    });
    times.push(performance.now() - t0);
    if (i % 26 === 25) send('\x15'); // Ctrl-U: keep the line short
  }
  send('\x15');
  return times;
}

async function oneHopEcho(): Promise<number[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/one-hop/server.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((res) => child.stdout!.on('data', (b: Buffer) => /listening on (\d+)/.test(b.toString()) && res(Number(/listening on (\d+)/.exec(b.toString())![1]))));
    const s: Socket = io(`http://127.0.0.1:${port}`, { transports: ['websocket'] });
    await new Promise((r) => s.once('output', r)); // the prompt
    const times = await echoTimes((k) => s.emit('input', k), (cb) => {
      s.on('output', cb);
      return () => s.off('output', cb);
    });
    s.disconnect();
    return times;
  } finally {
    child.kill();
  }
}

/** Attach with `snapshot: true`: time until painted (parsed by a headless xterm) and bytes received. */
async function reattach(ui: UiClient, sessionId: string): Promise<{ ms: number; bytes: number }> {
  const term = new Terminal({ cols: 120, rows: 32, scrollback: 10_000, allowProposedApi: true });
  let bytes = 0;
  const t0 = performance.now();
  const painted = new Promise<void>((resolve) => {
    const onSnap = (b: { session_id: string; screen: TerminalScreen }) => {
      if (b.session_id !== sessionId) return;
      bytes += JSON.stringify(b).length;
      term.write(b.screen.data);
    };
    const onEvents = (b: { session_id: string; events: WireEvent[] }) => {
      if (b.session_id === sessionId) bytes += JSON.stringify(b).length;
    };
    const onDone = (b: { session_id: string }) => {
      if (b.session_id !== sessionId) return;
      ui.off('session:snapshot', onSnap);
      ui.off('session:events', onEvents);
      ui.off('session:replayed', onDone);
      term.write('', () => resolve());
    };
    ui.on('session:snapshot', onSnap);
    ui.on('session:events', onEvents);
    ui.on('session:replayed', onDone);
  });
  await call(ui, 'session:attach', { session_id: sessionId, snapshot: true });
  await painted;
  const ms = performance.now() - t0;
  ui.emit('session:detach', { session_id: sessionId });
  term.dispose();
  return { ms, bytes };
}

async function main() {
  const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load average ${load()}`);
  const baseline = await oneHopEcho();
  console.log(`echo at the socket, one-hop baseline (socket.io + node-pty): ${fmt(baseline)}`);

  if (SNAPSHOT_KB) console.log(`reattach snapshot every ${SNAPSHOT_KB} KB of parsed output`);
  const stack = await startStack(SNAPSHOT_KB ? { env: { AGENT_VILLAGE_TERMINAL_SNAPSHOT_KB: SNAPSHOT_KB } } : {});
  try {
    const api = new Api(stack.url);
    await api.setupAdmin();
    const repo = await api.readyRepo();
    const session = await api.ok<{ id: string }>('POST', '/api/sessions', { repo_id: repo.id, room_path: '', provider: 'shell' });
    await api.waitState(session.id, ['RUNNING']);
    const watcher = new TerminalWatcher(await uiSocket(stack.url, api.cookie), session.id);
    await watcher.attach();
    await watcher.waitText(/[#$] $/, 'the prompt');
    const av = await echoTimes((k) => void watcher.type(k), (cb) => {
      const on = (b: { events: WireEvent[] }) => cb(b.events.map((e) => e.data ?? '').join(''));
      watcher.socket.on('session:events', on);
      return () => watcher.socket.off('session:events', on);
    });
    console.log(`echo at the socket, Agent Village (browser → control plane → runner → PTY and back): ${fmt(av)}`);

    const ui = await uiSocket(stack.url, api.cookie);
    const print = async (bytes: number, marker: string) => {
      // Watch only the tail of the stream for the marker (joining 64 MB per poll would be the bench's own cost).
      let tail = '';
      const done = new Promise<void>((resolve) => {
        const on = (b: { events: WireEvent[] }) => {
          tail = (tail + b.events.map((e) => e.data ?? '').join('')).slice(-256);
          if (tail.includes(`${marker}-42\r\n`)) {
            watcher.socket.off('session:events', on);
            resolve();
          }
        };
        watcher.socket.on('session:events', on);
      });
      // Numbered lines of 100 bytes from the shell itself (no file the session cannot read).
      await watcher.type(`seq -f '%099g' 1 ${Math.ceil(bytes / 100)}; echo ${marker}-$((6*7))\r`);
      await done;
      watcher.events = []; // the bench does not need to hold 64 MB of events
    };
    await print(64 * 1024, 'small');
    const small = [await reattach(ui, session.id), await reattach(ui, session.id), await reattach(ui, session.id)];
    console.log(`reattach after 64 KB: ${pct(small.map((r) => r.ms), 50).toFixed(0)} ms, ${(small[0]!.bytes / 1024).toFixed(0)} KB sent`);
    await print(BIG_MB * 1024 * 1024, 'big');
    const big = [await reattach(ui, session.id), await reattach(ui, session.id), await reattach(ui, session.id)];
    console.log(`reattach after ${BIG_MB} MB: ${pct(big.map((r) => r.ms), 50).toFixed(0)} ms, ${(big[0]!.bytes / 1024).toFixed(0)} KB sent`);

    const tl = await call<TerminalTimeline>(ui, 'terminal:timeline', { session_id: session.id });
    if (!tl.ok || !tl.data.last) throw new Error('no timeline');
    const last = tl.data.last.seq;
    const seekAll = async (ids: string) => {
      const seeks: number[] = [];
      let bytes = 0;
      for (let i = 0; i < SEEKS; i++) {
        const seq = 1 + Math.floor(((i + 0.5) / SEEKS) * (last - 1));
        const t0 = performance.now();
        // Not `call`: its 10 s guard is for tests; a bench reports a slow seek instead of failing.
        const res = (await ui.timeout(SEEK_GUARD_MS).emitWithAck('terminal:seek', { session_id: ids, seq })) as Result<TerminalScreen>;
        if (!res.ok) throw new Error(res.error.message);
        seeks.push(performance.now() - t0);
        bytes += res.data.data.length;
      }
      return { seeks, kb: bytes / SEEKS / 1024 };
    };
    const seek = await seekAll(session.id);
    console.log(`seek anywhere in ${BIG_MB} MB (${SEEKS} points, seek snapshots + segments): ${fmt(seek.seeks)}, ${seek.kb.toFixed(0)} KB per screen`);

    // Baseline in the same run: the same seeks from the 10,000-line reattach snapshots alone (how
    // seek worked before migration 024), with the seek snapshots moved aside and put back after.
    const db = await connectDb(`file:${join(stack.dataDir, 'village.db')}`);
    try {
      const segs = await db.terminalSegment.aggregate({ where: { sessionId: session.id }, _count: true, _sum: { chars: true } });
      const rowsLeft = await db.sessionEvent.count({ where: { sessionId: session.id, type: 'TERMINAL_CHUNK' } });
      const points = await db.terminalSeekPoint.count({ where: { sessionId: session.id } });
      const fulls = await db.terminalSnapshot.count({ where: { sessionId: session.id } });
      console.log(
        `stored output: ${segs._count} segment rows (${((segs._sum.chars ?? 0) / 1024 / 1024).toFixed(1)} MB), ${rowsLeft} chunk rows not folded yet; ${points} seek snapshots, ${fulls} reattach snapshots`,
      );
      await db.$executeRawUnsafe('CREATE TABLE "BenchSeekPointAside" AS SELECT * FROM "TerminalSeekPoint" WHERE "sessionId" = ?', session.id);
      await db.terminalSeekPoint.deleteMany({ where: { sessionId: session.id } });
      try {
        // The /ui namespace allows 30 seeks a second per connection (ui-limits.ts): the first 20
        // fast seeks took well under a second, so wait the window out before 20 more.
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        const old = await seekAll(session.id);
        console.log(`baseline, same seeks from the full snapshots only: ${fmt(old.seeks)}, ${old.kb.toFixed(0)} KB per screen`);
      } catch (err) {
        console.log(`baseline, same seeks from the full snapshots only: failed (${(err as Error).message})`);
      } finally {
        await db.$executeRawUnsafe('INSERT INTO "TerminalSeekPoint" SELECT * FROM "BenchSeekPointAside"');
        await db.$executeRawUnsafe('DROP TABLE "BenchSeekPointAside"');
      }
    } finally {
      await db.$disconnect();
    }
    console.log(`load average at the end: ${load()}`);
    ui.disconnect();
    watcher.socket.disconnect();
  } finally {
    await stack.stop();
  }
}

main()
  .then(() => process.exit(0))
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
