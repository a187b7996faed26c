/**
 * The runner's output path after redaction, in process (issue 17): each redacted chunk is spooled
 * (Spool.append: its record written before anything sends it), pumped by the EventSender, framed
 * (encodeRunnerFrame), encoded by socket.io-parser and framed by ws with a client's mask — what
 * socket.io-client hands the socket — and acked on the next turn, one chunk at a time as a
 * flooding session under flow control sends them. What bench:runner cannot show through its noise:
 * the same work, CPU by process.cpuUsage, with nothing else in the way.
 *
 * BENCH_BEFORE=DIR runs another checkout's `runner/spool/` alternately in the same process (e.g.
 * main's, from `git archive main | tar -x -C DIR` with node_modules linked in). Asserts nothing.
 * Usage: npm run bench:runner-path   (BENCH_MB 128, BENCH_CHUNK_KB 48 as bench:runner's flood
 * sends them, BENCH_ROUNDS 5, BENCH_OUTPUT=colour: lines with SGR colours and multi-byte characters)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Encoder, PacketType } from 'socket.io-parser';
import * as ws from 'ws';
import { ok, type Result, type RunnerEvent, type RunnerEventBody } from '../protocol';
import { silentLogger } from '../runner/log';
import type * as FrameModule from '../runner/spool/frame';
import type * as SenderModule from '../runner/spool/sender';
import type * as SpoolModule from '../runner/spool/spool';

const MB = Number(process.env.BENCH_MB ?? 128);
const CHUNK_CHARS = Number(process.env.BENCH_CHUNK_KB ?? 48) * 1024;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const COLOUR = process.env.BENCH_OUTPUT === 'colour';
const ROOT = join(import.meta.dirname, '..');
const CHECKOUTS = [...(process.env.BENCH_BEFORE ? [process.env.BENCH_BEFORE] : []), ROOT];

/** ws's framing (not in @types/ws): what socket.io-client's transport does to every message it sends. */
const { Sender } = ws as unknown as { Sender: { frame(data: Buffer | string, options: Record<string, unknown>): Buffer[] } };
const base: SpoolModule.SessionBase = { session_id: 'sess_benchpath1', org_id: 'org_bench', repo_id: 'repo_bench', repo_ref: { provider: 'local', owner: '', name: 'demo' } };
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

function lineOf(n: number): string {
  if (!COLOUR) return `${String(n).padStart(98, '0')}\r\n`;
  return `\x1b[1;32m✓\x1b[0m ${String(n).padStart(8, '0')} \x1b[36mINFO\x1b[0m é ${'─'.repeat(20)} ${'x'.repeat(40)}\r\n`;
}

/** 64 distinct chunks, reused round-robin (the output's text is not what is measured). */
function chunks(): string[] {
  let line = 0;
  return Array.from({ length: 64 }, () => {
    let data = '';
    while (data.length < CHUNK_CHARS) data += lineOf(++line);
    return data;
  });
}

interface Checkout {
  root: string;
  Spool: typeof SpoolModule.Spool;
  EventSender: typeof SenderModule.EventSender;
  encodeRunnerFrame: typeof FrameModule.encodeRunnerFrame;
}

async function checkout(root: string): Promise<Checkout> {
  const [spool, sender, frame] = await Promise.all([
    import(join(root, 'runner/spool/spool.ts')) as Promise<typeof SpoolModule>,
    import(join(root, 'runner/spool/sender.ts')) as Promise<typeof SenderModule>,
    import(join(root, 'runner/spool/frame.ts')) as Promise<typeof FrameModule>,
  ]);
  return { root, Spool: spool.Spool, EventSender: sender.EventSender, encodeRunnerFrame: frame.encodeRunnerFrame };
}

/** CPU ms per MB of output through one checkout's spool, sender and frames. */
async function round(c: Checkout, texts: string[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-runner-path-'));
  const spool = await c.Spool.open(dir, { log: silentLogger });
  // A send that fails is the bench's bug: stop rather than time the sender's backoff.
  const sender = new c.EventSender(spool, { ...silentLogger, error: (m: string, err?: unknown) => { throw err ?? new Error(m); } });
  const encoder = new Encoder();
  let acked = 0;
  sender.attach((batch: RunnerEvent[], done, utf8) => {
    const frame = c.encodeRunnerFrame(batch, utf8);
    for (const part of encoder.encode({ type: PacketType.EVENT, nsp: '/runner', data: ['runner:frame', frame], id: 1 }) as Array<string | Buffer>) {
      const text = typeof part === 'string';
      Sender.frame(text ? `4${part}` : part, { fin: true, mask: true, opcode: text ? 1 : 2, readOnly: !text, rsv1: false });
    }
    const last = batch[batch.length - 1]!;
    setImmediate(() => {
      acked = last.seq;
      done(ok({ acked: [{ session_id: last.session_id, seq: last.seq }] }) as Result<unknown>);
    });
  });
  const count = Math.ceil((MB * 1024 * 1024) / CHUNK_CHARS);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const event = spool.append(base, { type: 'TERMINAL_CHUNK', data: texts[i % texts.length]! } as RunnerEventBody);
    // The next chunk once this one was acked, as flow control paces a flood.
    while (acked < event!.seq) await new Promise((r) => setImmediate(r));
  }
  const cpu = process.cpuUsage(cpu0);
  sender.dispose();
  spool.close();
  rmSync(dir, { recursive: true, force: true });
  return (cpu.user + cpu.system) / 1000 / MB;
}

const texts = chunks();
const checkouts = await Promise.all(CHECKOUTS.map(checkout));
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}; load ${load()}`);
console.log(`${MB} MB of ${COLOUR ? 'coloured lines (SGR, ✓, é, ─)' : 'numbered lines'} in ${CHUNK_CHARS / 1024} KB chunks; ${ROUNDS} rounds, checkouts alternately`);
console.log('| runner/spool of | CPU ms per MB: min | median | rounds | load (1/5/15 min) |');
console.log('|---|---|---|---|---|');
const figures = new Map<Checkout, number[]>(checkouts.map((c) => [c, []]));
for (let r = 0; r < ROUNDS; r++) for (const c of checkouts) figures.get(c)!.push(await round(c, texts));
for (const [c, list] of figures) {
  const sorted = [...list].sort((a, b) => a - b);
  const name = c.root === ROOT ? 'this checkout' : `${c.root} (before)`;
  console.log(`| ${name} | ${sorted[0]!.toFixed(2)} | **${sorted[sorted.length >> 1]!.toFixed(2)}** | ${list.map((v) => v.toFixed(2)).join(' ')} | ${load()} |`);
}
