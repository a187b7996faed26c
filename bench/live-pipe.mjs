/**
 * Preloaded with `--import` by bench/terminal-live.ts (BENCH_PIPE=DIR): the control plane logs,
 * with Date.now(), every socket.io message of the terminal's path that crosses it — the runner's
 * frames and their storage acks, the viewers' frames and their flow-control acks, the acks
 * forwarded to the runner — with the seqs and bytes each carries, into DIR/pipe-server-<pid>.jsonl.
 * (The runner's environment is filtered, so it logs its own frames itself:
 * runner/connection-probe.ts startFrameLog.) bench/live-pipe.ts lines them up with the page's own
 * log into a time-line of where the flood's bytes wait. Rows are kept in memory and written every
 * WINDOW_MS; headers are small (a frame's JSON without its bytes), so parsing them is cheap.
 */
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

const WINDOW_MS = 250;
const dir = process.env.AGENT_VILLAGE_PIPE_DIR;
const isRunner = process.argv.some((a) => a.includes('runner'));

/** socket.io's packet: `<type>[<attachments>-][<nsp>,][<ack id>][json]`. */
const PACKET = /^(\d)(?:(\d+)-)?(?:(\/[^,]*),)?(\d+)?([\s\S]*)$/;

/** One row per message of interest: t, engine side, direction, event, ack id, seqs and bytes. */
function describe(data) {
  if (typeof data !== 'string') return null; // an attachment: its size is in the header before it
  const m = PACKET.exec(data);
  if (!m) return null;
  const [, type, , nsp, id, json] = m;
  let body;
  try {
    body = JSON.parse(json);
  } catch {
    return null;
  }
  if (type === '3' || type === '6') return { ack: Number(id), nsp };
  if (!Array.isArray(body)) return null;
  const [event, arg] = body;
  if (event === 'runner:frame') {
    // The chunks' seqs and UTF-8 sizes (the bytes follow as an attachment).
    const chunks = arg.events.filter((e) => e.type === 'TERMINAL_CHUNK').map((e) => [e.seq, e.bytes ?? e.data?.length ?? 0]);
    return { ev: event, id: id ? Number(id) : undefined, chunks };
  }
  if (event === 'terminal:output') return { ev: event, from: arg.from_seq, sizes: arg.sizes };
  if (event === 'terminal:ack') return { ev: event, seq: arg.seq };
  if (event === 'session:events' && !arg.replay) {
    const chunks = arg.events.filter((e) => e.type === 'TERMINAL_CHUNK').map((e) => [e.seq, e.data?.length ?? 0]);
    return chunks.length ? { ev: event, chunks } : null;
  }
  return null;
}

if (dir && isMainThread && !isRunner) {
  const file = join(dir, `pipe-server-${process.pid}.jsonl`);
  let rows = [];
  const log = (side, dirn, data) => {
    const d = describe(data);
    if (d) rows.push({ t: Date.now(), side, dir: dirn, ...d });
  };
  setInterval(() => {
    if (!rows.length) return;
    appendFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    rows = [];
  }, WINDOW_MS).unref();
  const require = createRequire(join(process.cwd(), 'package.json'));
  const { Socket } = require('engine.io');
  const side = (s) => ((s.request?.url ?? '').startsWith('/runner') ? 'runner' : 'ui');
  const send = Socket.prototype.sendPacket;
  Socket.prototype.sendPacket = function (type, data, options, callback) {
    if (type === 'message') log(side(this), 'out', data);
    return send.call(this, type, data, options, callback);
  };
  const receive = Socket.prototype.onPacket;
  Socket.prototype.onPacket = function (packet) {
    if (packet.type === 'message') log(side(this), 'in', packet.data);
    return receive.call(this, packet);
  };
}
