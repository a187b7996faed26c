/**
 * CPU per MB of terminal output on the runner's socket alone (issue 17): a runner-like
 * socket.io-client sends flood batches (numbered lines, 16 KB TERMINAL_CHUNKs, 8 per batch, each
 * acked before the next, as the runner's spool does) to a socket.io server on loopback that
 * validates them with the runner namespace's zod schema and acks. Client and server are separate
 * processes; each one's CPU per MB is printed. Two runs in one invocation: ws with its JS
 * mask/unmask (WS_NO_BUFFER_UTIL=1, the baseline) and with the native `bufferutil` it loads when
 * installed. Asserts nothing. Usage: npm run bench:runner-socket   (BENCH_MB)
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { Server } from 'socket.io';
import { io as connect } from 'socket.io-client';
import { RunnerEventBatchSchema, type RunnerEvent } from '../protocol';

const MB = Number(process.env.BENCH_MB ?? 32);
const CHUNK_KB = 16;
const CHUNKS_PER_BATCH = 8;
const LINE = 100;
/** The runner namespace's message cap (runner-engine.ts RUNNER_MAX_MESSAGE_BYTES is larger; a batch here is ~130 KB). */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

function batches(): RunnerEvent[][] {
  let line = 0;
  let seq = 0;
  const out: RunnerEvent[][] = [];
  for (let sent = 0; sent < MB * 1024 * 1024; ) {
    const b: RunnerEvent[] = [];
    for (let i = 0; i < CHUNKS_PER_BATCH; i++) {
      let data = '';
      while (data.length < CHUNK_KB * 1024) data += `${String(++line).padStart(LINE - 2, '0')}\r\n`;
      sent += data.length;
      b.push({ session_id: 'sess_bench0001', org_id: 'org_bench', repo_id: 'repo_bench', repo_ref: { provider: 'local', owner: '', name: 'demo' }, ts: Date.now(), seq: ++seq, type: 'TERMINAL_CHUNK', data } as RunnerEvent);
    }
    out.push(b);
  }
  return out;
}

async function serve(): Promise<void> {
  const http = createServer();
  const io = new Server(http, { maxHttpBufferSize: MAX_MESSAGE_BYTES, transports: ['websocket'] });
  let cpu0 = process.cpuUsage();
  io.of('/runner').on('connection', (socket) => {
    socket.on('start', (ack: () => void) => {
      cpu0 = process.cpuUsage();
      ack();
    });
    socket.on('runner:events', (batch: unknown, ack: (r: unknown) => void) => {
      const parsed = RunnerEventBatchSchema.safeParse(batch);
      ack(parsed.success ? { ok: true, data: { acked: parsed.data.length } } : { ok: false, error: 'bad batch' });
    });
    socket.on('end', (ack: (ms: number) => void) => ack(cpuMs(process.cpuUsage(cpu0))));
  });
  http.listen(0, '127.0.0.1', () => process.send!({ port: (http.address() as { port: number }).port }));
}

async function send(port: number): Promise<void> {
  const list = batches();
  const socket = connect(`http://127.0.0.1:${port}/runner`, { transports: ['websocket'] });
  await new Promise<void>((res) => socket.once('connect', () => res()));
  await socket.emitWithAck('start');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const b of list) await socket.emitWithAck('runner:events', b);
  const client = cpuMs(process.cpuUsage(cpu0));
  const seconds = (performance.now() - t0) / 1000;
  const server = (await socket.emitWithAck('end')) as number;
  socket.close();
  process.send!({ server, client, seconds });
}

async function run(native: boolean): Promise<{ server: number; client: number; seconds: number }> {
  const env = { ...process.env, ...(native ? {} : { WS_NO_BUFFER_UTIL: '1' }) };
  const server = fork(process.argv[1]!, ['serve'], { env, execArgv: process.execArgv });
  try {
    const { port } = await new Promise<{ port: number }>((res) => server.once('message', (m) => res(m as { port: number })));
    const client = fork(process.argv[1]!, ['send', String(port)], { env, execArgv: process.execArgv });
    return await new Promise((res) => client.once('message', (m) => res(m as { server: number; client: number; seconds: number })));
  } finally {
    server.kill();
  }
}

const role = process.argv[2];
if (role === 'serve') await serve();
else if (role === 'send') await send(Number(process.argv[3]));
else {
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}; load ${load()}`);
  console.log(`${MB} MB of numbered lines in ${CHUNK_KB} KB TERMINAL_CHUNKs, ${CHUNKS_PER_BATCH} per batch, each acked (socket.io over loopback)`);
  console.log('| ws mask/unmask | control plane CPU per MB | runner side CPU per MB | MB/s |');
  console.log('|---|---|---|---|');
  for (const native of [false, true, false, true]) {
    const r = await run(native);
    console.log(`| ${native ? 'bufferutil (native)' : 'JS (WS_NO_BUFFER_UTIL=1, baseline)'} | ${(r.server / MB).toFixed(1)} ms | ${(r.client / MB).toFixed(1)} ms | ${(MB / r.seconds).toFixed(1)} |`);
  }
  console.log(`load at the end: ${load()}`);
}
