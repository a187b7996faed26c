import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Invocation, ProceduralResult } from '../../../protocol';
import { EXIT, execute, exitCodeFor, parseResultData } from './executor';
import { runCommand } from './run-command';

const EXEC = path.join(import.meta.dirname, 'ao-deterministic-exec.mjs');
const ECHO_JSON = `python3 -c "import sys, json; print(json.dumps(json.loads(sys.stdin.read())))"`;

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'av-exec-'));
  // Prints its argv as JSON: shows exactly what the command received.
  fs.writeFileSync(path.join(dir, 'argv.mjs'), 'process.stdout.write(JSON.stringify(process.argv.slice(2)))\n');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const inv = (over: Partial<Invocation>): Invocation => ({
  schema_version: '2.2',
  mode: 'start',
  session_id: 'run_test1234',
  parameters: {},
  command: 'true',
  project_dir: dir,
  gateway_url: 'http://127.0.0.1:9/hook',
  ...over,
});

describe('execute', () => {
  it('runs the spec’s echo-json with the parameters on stdin: raw stdout, parsed JSON, exit code', async () => {
    const r = await execute(inv({ command: ECHO_JSON, parameters: { message: 'hi "there"; $(id)', count: 2 } }));
    expect(r).toMatchObject({ event_type: 'result', result_type: 'procedural', exit_code: 0, session_id: 'run_test1234' });
    expect(r.result_text).toBe('{"message": "hi \\"there\\"; $(id)", "count": 2}\n');
    expect(r.result_data).toEqual({ message: 'hi "there"; $(id)', count: 2 });
  });

  it('passes parameters as argv to a Node script, in the project directory, without a shell', async () => {
    const r = await execute(inv({ command: 'node argv.mjs --fixed "two words"', parameters: { q: `a'b "c" | d`, n: 5, on: true, off: false, list: ['x', 'y z'] } }));
    expect(r.result_data).toEqual(['--fixed', 'two words', '--q', `a'b "c" | d`, '--n', '5', '--on', '--list', 'x,y z']);
  });

  it('keeps non-JSON stdout as text with result_data null, and passes a failing exit code on', async () => {
    const r = await execute(inv({ command: `python3 -c "import sys; print('not json'); sys.exit(3)"` }));
    expect(r.result_text).toBe('not json\n');
    expect(r.result_data).toBeNull();
    expect(r.exit_code).toBe(3);
    expect(exitCodeFor(r)).toBe(3);
  });

  it('reports a missing program instead of throwing', async () => {
    const r = await execute(inv({ command: 'no-such-program-av --x' }));
    expect(r.spawn_error).toMatch(/command not found/);
    expect(exitCodeFor(r)).toBe(EXIT.NOT_STARTED);
  });

  it('stops a command at its timeout, with its whole process group', async () => {
    const r = await execute(inv({ command: `sh -c "sleep 30 & sleep 30"`, timeout_seconds: 1 }));
    expect(r.timed_out).toBe(true);
    expect(exitCodeFor(r)).toBe(EXIT.TIMED_OUT);
  }, 15_000);

  it('caps stdout and never blocks the command on a full pipe', async () => {
    const out = await runCommand({
      argv: ['node', '-e', 'process.stdout.write("x".repeat(300000)); console.error("done")'],
      cwd: dir,
      env: process.env,
      stdin: '',
      timeoutMs: 10_000,
      maxStdoutBytes: 1000,
    });
    expect(out.stdout.length).toBe(1000);
    expect(out.stdoutTruncated).toBe(true);
    expect(out.exitCode).toBe(0);
    expect(out.stderr).toContain('done');
    expect(parseResultData('{"a":1', true)).toBeNull();
  });
});

describe('the executable', () => {
  let server: http.Server;
  let url = '';
  const received: Array<{ auth: string | undefined; body: { provider: string; event: string; payload: ProceduralResult } }> = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ auth: req.headers.authorization, body: JSON.parse(body) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const run = (stdin: string) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [EXEC], { cwd: dir, stdio: ['pipe', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      child.on('close', (code) => resolve({ code, stderr }));
      child.stdin.end(stdin);
    });

  it('reads the invocation on stdin, sends the result event to the gateway and exits with the command’s code', async () => {
    const { code } = await run(JSON.stringify(inv({ command: `python3 -c "import sys, json; d = json.load(sys.stdin); print(json.dumps(d)); sys.exit(d['code'])"`, parameters: { code: 4 }, gateway_url: url, gateway_token: 'tok123' })));
    expect(code).toBe(4);
    const last = received.at(-1)!;
    expect(last.auth).toBe('Bearer tok123');
    expect(last.body).toMatchObject({ provider: 'deterministic', event: 'result' });
    expect(last.body.payload).toMatchObject({ event_type: 'result', result_type: 'procedural', exit_code: 4, result_data: { code: 4 } });
  });

  it('refuses a resume invocation with exit code 2 and says why', async () => {
    const { code, stderr } = await run(JSON.stringify(inv({ mode: 'resume' as never, gateway_url: url })));
    expect(code).toBe(EXIT.BAD_INVOCATION);
    expect(stderr).toContain('Deterministic agents do not support resumption');
  });
});
