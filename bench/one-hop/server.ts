/**
 * The one-hop baseline (what wetty is): socket.io + node-pty, no runner, no storage. The bench
 * starts it as its own process so both sides pay for their own event loop.
 * Usage: node --import tsx bench/one-hop/server.ts  → prints "one-hop listening on PORT".
 */
import { createServer } from 'node:http';
import { spawn } from 'node-pty';
import { Server } from 'socket.io';

const http = createServer();
const io = new Server(http, { maxHttpBufferSize: 1e6 });

io.on('connection', (socket) => {
  const pty = spawn('bash', ['--norc', '--noprofile'], {
    name: 'xterm-256color',
    cols: 120,
    rows: 32,
    cwd: process.env.HOME ?? '/',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color', PS1: '$ ' },
  });
  pty.onData((data) => socket.emit('output', data));
  socket.on('input', (data: unknown) => {
    if (typeof data === 'string') pty.write(data);
  });
  socket.on('disconnect', () => pty.kill());
});

http.listen(0, '127.0.0.1', () => {
  const addr = http.address();
  console.log(`one-hop listening on ${typeof addr === 'object' && addr ? addr.port : 0}`);
});
