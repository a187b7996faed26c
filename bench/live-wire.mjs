/**
 * Preloaded with `--import` by bench/terminal-live.ts (BENCH_WIRE=DIR): the control plane counts
 * the Engine.IO messages it sends and receives on each engine (the browsers' `/socket.io` and the
 * runners' own path), with their bytes (and how many of them were text: JSON), and the socket writes under them (one `write` or `writev`
 * system call each on a loopback socket), and appends the running totals to DIR/wire-<pid>.jsonl
 * every BENCH_WINDOW_MS. The bench subtracts two samples to say what one throughput run cost per
 * MB: how many messages, how big, how many syscalls per message.
 */
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Socket as NetSocket } from 'node:net';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

const WINDOW_MS = 250;
const dir = process.env.AGENT_VILLAGE_WIRE_DIR;
const isRunner = process.argv.some((a) => a.includes('runner'));

if (dir && isMainThread && !isRunner) {
  const require = createRequire(join(process.cwd(), 'package.json'));
  const { Socket: EngineSocket } = require('engine.io');
  /** Totals per engine path: messages and bytes out and in. */
  const totals = {};
  const entry = (path) => (totals[path] ??= { outMsgs: 0, outBytes: 0, outText: 0, inMsgs: 0, inBytes: 0, inText: 0 });
  const size = (d) => (d === undefined ? 0 : typeof d === 'string' ? Buffer.byteLength(d) : d.byteLength ?? 0);
  const pathOf = (s) => (s.request?.url ?? '').split('?')[0] || '?';
  const send = EngineSocket.prototype.sendPacket;
  EngineSocket.prototype.sendPacket = function (type, data, options, callback) {
    if (type === 'message') {
      const e = entry(pathOf(this));
      e.outMsgs++;
      e.outBytes += size(data);
      if (typeof data === 'string') e.outText += data.length;
    }
    return send.call(this, type, data, options, callback);
  };
  const receive = EngineSocket.prototype.onPacket;
  EngineSocket.prototype.onPacket = function (packet) {
    if (packet.type === 'message') {
      const e = entry(pathOf(this));
      e.inMsgs++;
      e.inBytes += size(packet.data);
      if (typeof packet.data === 'string') e.inText += packet.data.length;
    }
    return receive.call(this, packet);
  };
  // Socket writes: libuv turns each _write into one write(2) and each _writev into one writev(2)
  // when the socket is writable (a full loopback buffer queues them; strace -c counts exactly).
  const writes = { write: 0, writev: 0 };
  const w1 = NetSocket.prototype._write;
  NetSocket.prototype._write = function (...a) {
    writes.write++;
    return w1.apply(this, a);
  };
  const wv = NetSocket.prototype._writev;
  NetSocket.prototype._writev = function (...a) {
    writes.writev++;
    return wv.apply(this, a);
  };
  const file = join(dir, `wire-${process.pid}.jsonl`);
  setInterval(() => appendFileSync(file, JSON.stringify({ t: Date.now(), engines: totals, writes }) + '\n'), WINDOW_MS).unref();
}
