/**
 * CPU per MB of the control plane's last hop (issue 17): live terminal output from the server to
 * one viewer over a real socket.io connection on loopback, the viewer in its own process acking as
 * the page does (components/terminal/ack-scheduler.ts) under the product's flow-control window.
 * Side by side in one run, each twice after a warm-up round, alternated:
 *   - one-hop: `socket.emit('output', text)`, what bench/one-hop/server.ts (and wetty) does;
 *   - frames: binary `terminal:output` frames, one per runner batch (live-viewers.ts sendLive: the
 *     product before output under a flood was held for fewer frames);
 *   - held: the same through the product's fan-out now (LiveViewers.fanOut, server/realtime/live-hold.ts),
 *     batches handed over back to back as under a flood (so frames reach the hold's byte cap);
 *   - json: the same events as JSON `session:events` (a page that did not ask for binary).
 * Prints the server's CPU (user + system, this process only) per MB, the socket writes per MB and
 * the machine's load. Asserts nothing. Usage: node --import tsx bench/live-fanout.ts
 * (BENCH_MB, default 32; BENCH_FRAME_KB, default 48: what one runner frame carried in bench:live).
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { Socket as NetSocket } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { Server, type Socket } from 'socket.io';
import { io as connect } from 'socket.io-client';
import { AckScheduler } from '../components/terminal/ack-scheduler';
import { FLOW_CONTROL, TerminalOutputFrameSchema, UiTerminalAckSchema, type WireEvent } from '../protocol';
import { oneHopClient } from './live-echo';
import { LiveViewers, sendLive, type UiSocket, type Viewer } from '../server/realtime/live-viewers';

const MB = Number(process.env.BENCH_MB ?? 32);
const FRAME_KB = Number(process.env.BENCH_FRAME_KB ?? 48);
/** Each numbered line is this long with its newline, as in bench:live. */
const LINE = 100;
const SESSION = 'sess_benchfanout01';
type Variant = 'one-hop' | 'frames' | 'held' | 'json';

/**
 * The viewer: a socket.io client in its own process that acks like the page. The one-hop variant
 * is bench:live's one-hop client on the default namespace; the product's is a /ui client.
 */
function client(port: number, variant: Variant) {
  if (variant === 'one-hop') {
    const { socket } = oneHopClient(port);
    socket.on('done', () => process.exit(0));
    socket.on('connect', () => socket.emit('start'));
    return;
  }
  const socket = connect(`http://127.0.0.1:${port}/ui`, { transports: ['websocket'] });
  const acks = new AckScheduler((seq) => socket.emit('terminal:ack', { session_id: SESSION, seq }));
  socket.on('terminal:output', (raw: unknown) => {
    const f = TerminalOutputFrameSchema.parse(raw);
    acks.parsed(f.from_seq + f.sizes.length - 1, f.data.byteLength);
  });
  socket.on('session:events', (b: { events: WireEvent[] }) => {
    for (const e of b.events) acks.parsed(e.seq, e.data?.length ?? 0);
  });
  socket.on('done', () => process.exit(0));
  socket.on('connect', () => socket.emit('start'));
}

/** Socket writes (one write or writev system call each on loopback) made by this process. */
let writes = 0;
for (const m of ['_write', '_writev'] as const) {
  const orig = NetSocket.prototype[m] as (...a: unknown[]) => unknown;
  (NetSocket.prototype as unknown as Record<string, unknown>)[m] = function (this: NetSocket, ...a: unknown[]) {
    writes++;
    return orig.apply(this, a);
  };
}

function text(frames: number): string[] {
  const out: string[] = [];
  let n = 1;
  for (let f = 0; f < frames; f++) {
    let s = '';
    while (s.length < FRAME_KB * 1024) s += `${String(n++).padStart(LINE - 2, '0')}\r\n`;
    out.push(s);
  }
  return out;
}

/** Streams `data` to the viewer under the flow-control window; resolves with CPU ms and writes per MB. */
function stream(socket: Socket, variant: Variant, data: string[]): Promise<{ cpuMsPerMb: number; writesPerMb: number }> {
  const viewer: Viewer = { socket: socket as unknown as UiSocket, runnerId: null, replaying: false, buffer: [], lastSeq: 0, ackSeq: 0, binary: variant !== 'json' };
  // The product's fan-out (acks come back to this bench below, not through its flow control).
  const viewers = new LiveViewers({ terminalAck: () => undefined, releaseFlowControl: async () => undefined });
  if (variant === 'held') viewers.add(SESSION, socket.id, viewer);
  const mb = data.reduce((a, s) => a + s.length, 0) / (1024 * 1024);
  let next = 0;
  let sentChars = 0;
  let ackedChars = 0;
  const sizes: number[] = [];
  return new Promise((resolve) => {
    const cpu0 = process.cpuUsage();
    const writes0 = writes;
    const pump = () => {
      while (next < data.length && sentChars - ackedChars < FLOW_CONTROL.HIGH_WATERMARK_CHARS) {
        const d = data[next++]!;
        sentChars += d.length;
        sizes.push(sentChars);
        if (variant === 'one-hop') socket.emit('output', d);
        else {
          const e: WireEvent = { seq: next, type: 'TERMINAL_CHUNK', ts: Date.now(), data: d };
          if (variant === 'held') viewers.fanOut(SESSION, [e]);
          else {
            sendLive(SESSION, viewer, [e]);
            viewer.lastSeq = next;
          }
        }
      }
      if (ackedChars >= sentChars && next === data.length) {
        viewers.remove(SESSION, socket.id);
        const u = process.cpuUsage(cpu0);
        resolve({ cpuMsPerMb: (u.user + u.system) / 1000 / mb, writesPerMb: (writes - writes0) / mb });
      }
    };
    socket.on('ack', (n: number) => {
      ackedChars += n;
      pump();
    });
    socket.on('terminal:ack', (raw: unknown) => {
      const { seq } = UiTerminalAckSchema.parse(raw);
      ackedChars = Math.max(ackedChars, sizes[seq - 1] ?? 0);
      pump();
    });
    pump();
  });
}

async function main() {
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; load ${load()}; ${MB} MB in frames of ${FRAME_KB} KB`);
  const http = createServer();
  const io = new Server(http, { transports: ['websocket'], maxHttpBufferSize: 1e6 });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const port = (http.address() as { port: number }).port;
  const data = text(Math.ceil((MB * 1024) / FRAME_KB));
  const results: Record<Variant, string[]> = { 'one-hop': [], frames: [], held: [], json: [] };
  // Round 0 warms up the JIT of both paths and is not printed (the first variant run paid for it).
  for (let round = 0; round < 3; round++) {
    for (const variant of ['one-hop', 'frames', 'held', 'json'] as const) {
      const child = fork(import.meta.filename, ['client', String(port), variant], { execArgv: ['--import', 'tsx'] });
      const nsp = io.of(variant === 'one-hop' ? '/' : '/ui');
      const socket = await new Promise<Socket>((resolve) => nsp.once('connection', (s) => s.once('start', () => resolve(s))));
      const r = await stream(socket, variant, data);
      socket.emit('done');
      await new Promise((res) => child.once('exit', res));
      if (round > 0) results[variant].push(`${r.cpuMsPerMb.toFixed(1)} ms/MB, ${r.writesPerMb.toFixed(0)} writes/MB (load ${load()})`);
    }
  }
  console.log('\n| server → viewer | run 1 | run 2 |\n|---|---|---|');
  for (const [v, rs] of Object.entries(results)) console.log(`| ${v} | ${rs.join(' | ')} |`);
  io.close();
}

if (process.argv[2] === 'client') client(Number(process.argv[3]), process.argv[4] as Variant);
else await main();
