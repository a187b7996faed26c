/**
 * The one-hop baseline (what wetty is): socket.io + node-pty + an xterm page, no runner, no
 * storage. The bench starts it as its own process so both sides pay for their own event loop.
 * Flow control as wetty and we do it: the page acks characters after xterm parsed them, in the
 * same steps as ours (FLOW_CONTROL.ACK_CHARS / ACK_DELAY_MS); the PTY pauses above the same
 * watermarks, so a 64 MB flood never overruns xterm.
 * Usage: node --import tsx bench/one-hop/server.ts  → prints "one-hop listening on PORT".
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { spawn } from 'node-pty';
import { Server } from 'socket.io';
import { FLOW_CONTROL } from '../../protocol';

const require = createRequire(import.meta.url);
/** ONE_HOP_FLOW_DIR: log every pause and resume as the runner does (bench/live-flow.ts sums the paused time). */
const FLOW_LOG = process.env.ONE_HOP_FLOW_DIR ? `${process.env.ONE_HOP_FLOW_DIR}/one-hop-${process.pid}.jsonl` : null;
const logFlow = (paused: boolean, backlog: number) => FLOW_LOG && appendFileSync(FLOW_LOG, JSON.stringify({ t: Date.now(), paused, backlog }) + '\n');
const xtermDir = require.resolve('@xterm/xterm/package.json').replace(/package\.json$/, '');
const files: Record<string, [string, string]> = {
  '/xterm.js': ['text/javascript', readFileSync(`${xtermDir}lib/xterm.js`, 'utf8')],
  '/xterm.css': ['text/css', readFileSync(`${xtermDir}css/xterm.css`, 'utf8')],
  // The same terminal options as the product's (DOM renderer, 10 000 lines of scrollback).
  '/': ['text/html', `<!doctype html><link rel="stylesheet" href="/xterm.css"><div id="t" style="width:1200px;height:700px"></div>
<script src="/xterm.js"></script><script src="/socket.io/socket.io.js"></script><script>
const term = new Terminal({ scrollback: 10000, fontSize: 13, fontFamily: 'DejaVu Sans Mono, monospace' });
term.open(document.getElementById('t'));
window.__avTerminals = { 'one-hop': term };
const socket = io({ transports: ['websocket'] });
let unacked = 0, timer = null;
const ack = () => { clearTimeout(timer); timer = null; socket.emit('ack', unacked); unacked = 0; };
socket.on('output', (d) => {
  window.__avOnChunk?.('one-hop', d);
  term.write(d, () => { unacked += d.length; if (unacked >= ${FLOW_CONTROL.ACK_CHARS}) ack(); else timer ??= setTimeout(ack, ${FLOW_CONTROL.ACK_DELAY_MS}); });
});
term.onData((d) => socket.emit('input', d));
window.__ready = true;
</script>`],
};

const http = createServer((req, res) => {
  const f = files[req.url ?? ''];
  if (!f) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': f[0] }).end(f[1]);
});
const io = new Server(http, { maxHttpBufferSize: 1e6 });

io.on('connection', (socket) => {
  const pty = spawn('bash', ['--norc', '--noprofile'], {
    name: 'xterm-256color',
    cols: 120,
    rows: 32,
    cwd: process.env.HOME ?? '/',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color', PS1: '$ ' },
  });
  let unacked = 0;
  let paused = false;
  pty.onData((data) => {
    socket.emit('output', data);
    unacked += data.length;
    if (!paused && unacked > FLOW_CONTROL.HIGH_WATERMARK_CHARS) {
      paused = true;
      logFlow(true, unacked);
      pty.pause();
    }
  });
  socket.on('ack', (chars: unknown) => {
    if (typeof chars !== 'number') return;
    unacked = Math.max(0, unacked - chars);
    if (paused && unacked < FLOW_CONTROL.LOW_WATERMARK_CHARS) {
      paused = false;
      logFlow(false, unacked);
      pty.resume();
    }
  });
  socket.on('input', (data: unknown) => {
    if (typeof data === 'string') pty.write(data);
  });
  socket.on('disconnect', () => pty.kill());
});

http.listen(0, '127.0.0.1', () => {
  const addr = http.address();
  console.log(`one-hop listening on ${typeof addr === 'object' && addr ? addr.port : 0}`);
});
