/**
 * CPU per MB of terminal output on the runner's side of the live path and on the control plane's
 * receiving end (issue 17), before the ingest. Two parts, each printed beside its baseline:
 *
 * (1) In process, stage by stage, over the same numbered-line output (16 KB TERMINAL_CHUNKs): the
 *     runner's stream redaction, its spool append (before: zod, JSON.stringify and the write of a JSONL line),
 *     a shell test run's kept output tail,
 *     batch building with acks (EventSender), socket.io's encoding of a batch; the control plane's
 *     socket.io decoding and validation of it. JSON batches (`runner:events`, the baseline) and
 *     binary frames (`runner:frame`, protocol/runner-frame.ts) side by side.
 * (2) Over loopback between two processes: a runner-like socket.io-client sends the batches
 *     (each acked before the next, as the runner's spool does) to a socket.io server that decodes
 *     and validates them like the runner namespace; each process's CPU per MB, JSON vs frames.
 *
 * Asserts nothing. Usage: npm run bench:runner-socket   (BENCH_MB, default 32)
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeSync, openSync, closeSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from 'socket.io';
import { io as connect } from 'socket.io-client';
import { Decoder, Encoder, PacketType, type Packet } from 'socket.io-parser';
import { createStreamRedactor } from '../common/redact';
import {
  FLOW_CONTROL,
  RunnerEventBatchSchema,
  RunnerEventSchema,
  RunnerFrameEventsSchema,
  ok,
  type Result,
  type RunnerEvent,
  type RunnerEventBody,
} from '../protocol';
import { MAX_CAPTURED_OUTPUT } from '../runner/hooks/hook-bridge';
import { silentLogger, type Logger } from '../runner/log';
import { OutputTail } from '../runner/pty/output-tail';
import { encodeRunnerFrame, type FrameBytes } from '../runner/spool/frame';
import { EventSender } from '../runner/spool/sender';
import { Spool, type SessionBase } from '../runner/spool/spool';

const MB = Number(process.env.BENCH_MB ?? 32);
const CHUNK_KB = 16;
const LINE = 100;
/** As the runner sends them: up to 256 000 characters a batch (sender.ts MAX_BATCH_CHARS). */
const CHUNKS_PER_BATCH = 15;
/** The runner namespace's message cap (runner-engine.ts RUNNER_MAX_MESSAGE_BYTES). */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
const base: SessionBase = { session_id: 'sess_bench0001', org_id: 'org_bench', repo_id: 'repo_bench', repo_ref: { provider: 'local', owner: '', name: 'demo' } };

/** BENCH_OUTPUT=colour: each line with SGR colours and a non-ASCII character (what JSON escapes most). */
const COLOUR = process.env.BENCH_OUTPUT === 'colour';

function lineOf(n: number): string {
  const num = String(n).padStart(8, '0');
  if (!COLOUR) return `${String(n).padStart(LINE - 2, '0')}\r\n`;
  return `\x1b[1;32m${num}\x1b[0m \x1b[36mINFO\x1b[0m é ${'x'.repeat(LINE - 34)}\r\n`;
}

function chunks(): string[] {
  let line = 0;
  const out: string[] = [];
  for (let sent = 0; sent < MB * 1024 * 1024; ) {
    let data = '';
    while (data.length < CHUNK_KB * 1024) data += lineOf(++line);
    sent += data.length;
    out.push(data);
  }
  return out;
}

function eventsOf(texts: string[]): RunnerEvent[] {
  return texts.map((data, i) => ({ ...base, ts: Date.now(), seq: i + 1, type: 'TERMINAL_CHUNK', data }) as RunnerEvent);
}

function batchesOf(events: RunnerEvent[]): RunnerEvent[][] {
  const out: RunnerEvent[][] = [];
  for (let i = 0; i < events.length; i += CHUNKS_PER_BATCH) out.push(events.slice(i, i + CHUNKS_PER_BATCH));
  return out;
}

/** CPU ms per MB of `fn`, best of two rounds (a neighbour's burst lands in one of them). */
function perMb(fn: () => void): number {
  let best = Infinity;
  for (let round = 0; round < 2; round++) {
    const c0 = process.cpuUsage();
    fn();
    best = Math.min(best, cpuMs(process.cpuUsage(c0)));
  }
  return best / MB;
}

const packet = (name: string, body: unknown, id: number): Packet => ({ type: PacketType.EVENT, nsp: '/runner', data: [name, body], id });

/** What the control plane's socket.io does with what arrived: decode to the packet's arguments. */
function decodeAll(encoded: Array<Array<string | Buffer>>): unknown[] {
  const out: unknown[] = [];
  const decoder = new Decoder();
  decoder.on('decoded', (p: Packet) => out.push((p.data as unknown[])[1]));
  for (const parts of encoded) for (const part of parts) decoder.add(part);
  return out;
}

async function stages(): Promise<void> {
  const texts = chunks();
  const events = eventsOf(texts);
  const batches = batchesOf(events);
  const dir = mkdtempSync(join(tmpdir(), 'bench-spool-'));
  const log = silentLogger;
  const fmt = (ms: number | undefined) => (ms === undefined ? '—' : `${ms.toFixed(1)} ms`);
  const row = (what: string, before: number | undefined, now?: number) =>
    console.log(`| ${what} | ${fmt(before)} | ${now === undefined && before !== undefined ? 'same' : fmt(now)} |`);
  try {
    console.log('| runner stage (in process) | before: JSONL spool, JSON batches | now: raw spool, binary frames |');
    console.log('|---|---|---|');
    row('stream redaction (StreamRedactor.push)', perMb(() => {
      const r = createStreamRedactor();
      for (const t of texts) r.push(t);
    }));
    // Before: what Spool.append did per event until issue 17 (zod, a JSON line, its write).
    let legacyRound = 0;
    const legacy = perMb(() => {
      const fd = openSync(join(dir, `legacy-${legacyRound++}.jsonl`), 'a');
      for (const e of events) {
        const parsed = RunnerEventSchema.safeParse(e);
        if (parsed.success) writeSync(fd, `${JSON.stringify(parsed.data)}\n`);
      }
      closeSync(fd);
    });
    let round = 0;
    const spools = await Promise.all([0, 1].map((i) => Spool.open(join(dir, `append-${i}`), { log })));
    const spooled: Array<Array<FrameBytes | undefined>> = [];
    const now = perMb(() => {
      const spool = spools[round++]!;
      for (const t of texts) spool.append(base, { type: 'TERMINAL_CHUNK', data: t } as RunnerEventBody);
      const pending = spool.pendingAfter(base.session_id, 0);
      spooled.length = 0;
      for (let i = 0; i < pending.length; i += CHUNKS_PER_BATCH) spooled.push(pending.slice(i, i + CHUNKS_PER_BATCH).map((p) => p.utf8));
      spool.close();
    });
    row('spool append (before: zod + JSON.stringify + write; now: Spool.append)', legacy, now);
    row('spool append + batch building + acks (EventSender, 1 MB windows)', undefined, await spoolAndSendPerMb(dir, texts, log));
    // A shell session's test run keeps its output's last 1 MB for the summary (hook-bridge.ts).
    row(
      'test-run output tail, 1 MB kept (before: slice per read; now: OutputTail)',
      perMb(() => {
        let out = '';
        for (const t of texts) {
          const o = out + t;
          out = o.length > MAX_CAPTURED_OUTPUT ? o.slice(o.length - MAX_CAPTURED_OUTPUT) : o;
        }
      }),
      perMb(() => {
        const tail = new OutputTail(MAX_CAPTURED_OUTPUT);
        for (const t of texts) tail.append(t);
        void tail.value;
      }),
    );
    const encoder = new Encoder();
    let encodedJson: Array<Array<string | Buffer>> = [];
    let encodedFrames: Array<Array<string | Buffer>> = [];
    const encJson = perMb(() => {
      encodedJson = batches.map((b, i) => encoder.encode(packet('runner:events', b, i)) as Array<string | Buffer>);
    });
    const encFrame = perMb(() => {
      encodedFrames = batches.map((b, i) => encoder.encode(packet('runner:frame', encodeRunnerFrame(b, spooled[i]), i)) as Array<string | Buffer>);
    });
    row('socket.io encode (now: + encodeRunnerFrame from the spool\'s bytes)', encJson, encFrame);
    const wireJson = encodedJson.reduce((n, parts) => n + parts.reduce((m, p) => m + Buffer.byteLength(p), 0), 0);
    const wireFrame = encodedFrames.reduce((n, parts) => n + parts.reduce((m, p) => m + Buffer.byteLength(p), 0), 0);
    console.log(`| bytes on the wire per MB of output | ${(wireJson / MB / 1048576).toFixed(2)} MB | ${(wireFrame / MB / 1048576).toFixed(2)} MB |`);
    console.log('| **control plane, on arrival (in process)** | | |');
    row('socket.io decode', perMb(() => void decodeAll(encodedJson)), perMb(() => void decodeAll(encodedFrames)));
    const argsJson = decodeAll(encodedJson);
    const argsFrame = decodeAll(encodedFrames);
    row(
      'validate (zod batch; frames: + decode of the UTF-8)',
      perMb(() => {
        for (const a of argsJson) RunnerEventBatchSchema.safeParse(a);
      }),
      perMb(() => {
        for (const a of argsFrame) RunnerFrameEventsSchema.safeParse(a);
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Spool append, then the sender pumping it to a transport that acks every batch on the next turn,
 * one flow-control window (FLOW_CONTROL.HIGH_WATERMARK_CHARS) at a time, as a flooding session
 * runs: a backlog bigger than that never builds up in the spool.
 */
async function spoolAndSendPerMb(dir: string, texts: string[], log: Logger): Promise<number> {
  const window = Math.max(1, Math.floor(FLOW_CONTROL.HIGH_WATERMARK_CHARS / (CHUNK_KB * 1024)));
  let best = Infinity;
  for (let round = 0; round < 2; round++) {
    const spool = await Spool.open(join(dir, `sender-${round}`), { log });
    const sender = new EventSender(spool, log);
    sender.attach((batch, done) => {
      const last = batch[batch.length - 1]!;
      setImmediate(() => done(ok({ acked: [{ session_id: last.session_id, seq: last.seq }] }) as Result<unknown>));
    });
    const c0 = process.cpuUsage();
    for (let i = 0; i < texts.length; i += window) {
      for (const t of texts.slice(i, i + window)) spool.append(base, { type: 'TERMINAL_CHUNK', data: t } as RunnerEventBody);
      await sender.whenDrained(600_000);
    }
    best = Math.min(best, cpuMs(process.cpuUsage(c0)));
    sender.dispose();
    spool.close();
  }
  return best / MB;
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
    const answer = (parsed: { success: boolean; data?: unknown[] }, ack: (r: unknown) => void) =>
      ack(parsed.success ? { ok: true, data: { acked: parsed.data!.length } } : { ok: false, error: 'bad batch' });
    socket.on('runner:events', (batch: unknown, ack: (r: unknown) => void) => answer(RunnerEventBatchSchema.safeParse(batch), ack));
    socket.on('runner:frame', (frame: unknown, ack: (r: unknown) => void) => answer(RunnerFrameEventsSchema.safeParse(frame), ack));
    socket.on('end', (ack: (ms: number) => void) => ack(cpuMs(process.cpuUsage(cpu0))));
  });
  http.listen(0, '127.0.0.1', () => process.send!({ port: (http.address() as { port: number }).port }));
}

async function send(port: number, frames: boolean): Promise<void> {
  const list = batchesOf(eventsOf(chunks()));
  const socket = connect(`http://127.0.0.1:${port}/runner`, { transports: ['websocket'] });
  await new Promise<void>((res) => socket.once('connect', () => res()));
  await socket.emitWithAck('start');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const b of list) {
    const res = (await (frames ? socket.emitWithAck('runner:frame', encodeRunnerFrame(b)) : socket.emitWithAck('runner:events', b))) as { ok: boolean };
    if (!res.ok) throw new Error('the server refused a batch');
  }
  const client = cpuMs(process.cpuUsage(cpu0));
  const seconds = (performance.now() - t0) / 1000;
  const server = (await socket.emitWithAck('end')) as number;
  socket.close();
  process.send!({ server, client, seconds });
}

async function run(frames: boolean): Promise<{ server: number; client: number; seconds: number }> {
  const server = fork(process.argv[1]!, ['serve'], { execArgv: process.execArgv });
  try {
    const { port } = await new Promise<{ port: number }>((res) => server.once('message', (m) => res(m as { port: number })));
    const client = fork(process.argv[1]!, ['send', String(port), frames ? 'frames' : 'json'], { execArgv: process.execArgv });
    return await new Promise((res) => client.once('message', (m) => res(m as { server: number; client: number; seconds: number })));
  } finally {
    server.kill();
  }
}

const role = process.argv[2];
if (role === 'serve') await serve();
else if (role === 'send') await send(Number(process.argv[3]), process.argv[4] === 'frames');
else {
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}; load ${load()}`);
  console.log(`${MB} MB of ${COLOUR ? 'coloured lines (SGR + é)' : 'numbered lines'} in ${CHUNK_KB} KB TERMINAL_CHUNKs, ${CHUNKS_PER_BATCH} per batch; CPU ms per MB of output`);
  await stages();
  console.log('');
  console.log('| over loopback (two processes, bufferutil) | control plane CPU per MB | runner side CPU per MB | MB/s |');
  console.log('|---|---|---|---|');
  for (const frames of [false, true, false, true]) {
    const r = await run(frames);
    console.log(`| ${frames ? 'binary frames (runner:frame)' : 'JSON batches (runner:events, baseline)'} | ${(r.server / MB).toFixed(1)} ms | ${(r.client / MB).toFixed(1)} ms | ${(MB / r.seconds).toFixed(1)} |`);
  }
  console.log(`load at the end: ${load()}`);
}
