#!/usr/bin/env node
// Runs INSIDE a session's sandbox (its own network namespace, loopback only): listens on
// 127.0.0.1:<port> and passes every connection to the runner's egress proxy on the Unix socket
// bind-mounted into the sandbox, then runs the session's program as its child and ends as it
// ends (same exit code, or the same signal). Plain JavaScript: it runs with the runner's node
// and nothing else, and it has no decision to make (the proxy on the runner decides).
// usage: egress-forwarder.mjs <socket> <port> <program> [args...]
import { spawn } from 'node:child_process';
import net from 'node:net';

const [socketPath, portText, file, ...args] = process.argv.slice(2);
const port = Number(portText);
if (!socketPath || !Number.isInteger(port) || !file) {
  process.stderr.write('agent-village egress forwarder: usage: egress-forwarder.mjs <socket> <port> <program> [args...]\n');
  process.exit(2);
}

const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', end);
  upstream.on('error', end);
  client.on('close', end);
  upstream.on('close', end);
});

server.on('error', (err) => {
  process.stderr.write(`agent-village egress forwarder: ${err.message}\n`);
  process.exit(2);
});

// The program starts only once the forwarder listens, so its first request already has a way out.
server.listen(port, '127.0.0.1', () => {
  const child = spawn(file, args, { stdio: 'inherit' });
  // The terminal's own signals reach the program's process group directly; the ones the runner
  // sends to stop the session are passed on. SIGINT is the program's to handle, not ours.
  for (const sig of ['SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  process.on('SIGINT', () => {});
  child.on('error', (err) => {
    process.stderr.write(`agent-village: cannot start ${file}: ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    server.close();
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
});
