import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WorkItem } from '../../protocol';
import { makeRepo } from '../dta/testing/fixture-repos';
import { HookServer } from '../hooks';
import { silentLogger } from '../log';
import { hiddenPaths, probeSandbox, type SandboxSupport } from '../sandbox';
import { executeWorkItem, type ExecuteOptions } from './execute';
import { stepEnv } from './skills';
import { stateHash } from './state';

/**
 * Agent work items for real: the fake CLI (e2e/fixtures/fake-agent/fake-headless.mjs) reads the
 * hook config the runner wrote into its HOME, as Claude Code / Gemini CLI / Codex do, and calls
 * av-hook.mjs for every tool use → the runner's hook server counts them (max_tool_ops). And the
 * agent runs inside the bubblewrap sandbox sessions get: the runner's data dir is not there, and
 * nothing outside the worktree can be written.
 */
const FAKE_AGENT = path.resolve(import.meta.dirname, '../../e2e/fixtures/fake-agent/fake-headless.mjs');
const CLIS = ['claude', 'gemini', 'codex'] as const;
const agentCommands = Object.fromEntries(CLIS.map((c) => [c, [process.execPath, FAKE_AGENT, '--cli', c]]));
const dirs: string[] = [];
let hooks: HookServer;
let dataDir: string;
let sandbox: SandboxSupport;

beforeAll(async () => {
  hooks = await HookServer.start(silentLogger);
  // A stand-in for the runner's data dir, outside /tmp (which the sandbox replaces wholesale anyway).
  dataDir = fs.mkdtempSync(path.join(os.homedir(), '.av-runner-data-'));
  fs.writeFileSync(path.join(dataDir, 'runner-token'), 'the-runner-secret\n');
  sandbox = await probeSandbox({ dir: path.join(dataDir, 'sandbox'), hidden: hiddenPaths(dataDir, []) });
});
afterAll(async () => {
  await hooks?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup(extra: Partial<ExecuteOptions> = {}): { repo: string; opts: ExecuteOptions } {
  const repo = makeRepo({ 'src/a.js': 'export const a = 1;\n' }, 'agent-step');
  const receiptDir = fs.mkdtempSync(path.join(os.tmpdir(), 'receipts-'));
  dirs.push(repo, receiptDir);
  return { repo, opts: { root: repo, receiptDir, agentCommands, env: stepEnv(os.tmpdir()), hooks, ...extra } };
}

function item(skill: string, prompt: string, maxToolOps = 50): WorkItem {
  return {
    id: 'wi_agent_step',
    agent_id: skill,
    description: 'an agent step',
    dependencies: [],
    constraints: { max_files: 10, max_tool_ops: maxToolOps, max_delta_size: 100, timeout_ms: 60_000 },
    budget: { time_estimate_ms: 1000, complexity: 'high' },
    skill,
    params: { prompt },
  };
}

describe('tool ops from the CLIs\u2019 own hooks', () => {
  for (const cli of CLIS) {
    it(`${cli}: every tool call reaches the hook server and counts; past the budget the step is denied and rolled back`, async () => {
      const { repo, opts } = setup();
      const fine = await executeWorkItem(item(`agent.${cli}`, 'write a.txt=1; write b.txt=2'), opts);
      expect(fine.result.status).toBe('success');
      // The agent process + two tool calls, each reported through the hook path.
      expect(fine.result.metrics.tool_ops_count).toBe(3);
      const before = await stateHash(repo);
      const over = await executeWorkItem(item(`agent.${cli}`, 'write c.txt=1; write d.txt=2; write e.txt=3', 3), opts);
      expect(over.result).toMatchObject({ status: 'denied', denial_reason: 'Exceeded max tool ops: 4 > 3' });
      expect(await stateHash(repo)).toBe(before);
    });
  }

  it('the hook answers "deny" once the budget is spent: the tool never runs', async () => {
    const { repo, opts } = setup();
    // Budget 2 → the agent may make 1 tool call; the second PreToolUse is denied, so no second file.
    const out = await executeWorkItem(item('agent.claude', 'write one.txt=1; write two.txt=2', 2), opts);
    expect(out.result.status).toBe('denied');
    expect(fs.existsSync(path.join(repo, 'two.txt'))).toBe(false);
  });

  it('without the hook channel no tool call is seen (only the agent process counts)', async () => {
    const { opts } = setup({ hooks: undefined });
    const out = await executeWorkItem(item('agent.claude', 'write a.txt=1; write b.txt=2'), opts);
    expect(out.result.metrics.tool_ops_count).toBe(1);
  });
});

describe('agent steps in the session sandbox', () => {
  it('the sandbox is available on this machine (the tests below need it)', () => {
    expect(sandbox.available, sandbox.why).toBe(true);
  });

  it('an agent that reads the runner\u2019s data dir fails, and the step is rolled back', async () => {
    const secret = path.join(dataDir, 'runner-token');
    // Unsandboxed, the same agent gets the secret (so the test below can fail).
    const open = setup();
    const leak = await executeWorkItem(item('agent.claude', `read ${secret}`), open.opts);
    expect(leak.result.status).toBe('success');
    expect(fs.readFileSync(path.join(open.repo, 'stolen.txt'), 'utf8')).toContain('the-runner-secret');

    const { repo, opts } = setup({ sandbox, homesDir: dataDir });
    const before = await stateHash(repo);
    const out = await executeWorkItem(item('agent.claude', `write ok.txt=fine; read ${secret}`), opts);
    expect(out.result).toMatchObject({ status: 'failure', error: 'the agent exited 1' });
    expect(await stateHash(repo)).toBe(before);
    expect(fs.existsSync(path.join(repo, 'stolen.txt'))).toBe(false);
    expect(fs.existsSync(path.join(repo, 'ok.txt'))).toBe(false);
  });

  it('an agent that writes outside its worktree fails, nothing lands outside, and the step is rolled back', async () => {
    const outside = fs.mkdtempSync(path.join(os.homedir(), '.av-outside-'));
    dirs.push(outside);
    const { repo, opts } = setup({ sandbox, homesDir: dataDir });
    const before = await stateHash(repo);
    const out = await executeWorkItem(item('agent.claude', `write inside.txt=1; write ${outside}/escaped.txt=2`), opts);
    expect(out.result.status).toBe('failure');
    expect(fs.existsSync(path.join(outside, 'escaped.txt'))).toBe(false);
    expect(await stateHash(repo)).toBe(before);
  });

  it('inside the sandbox the worktree is writable, tool calls still reach the hooks, and the test command runs there too', async () => {
    const { repo, opts } = setup({ sandbox, homesDir: dataDir });
    const out = await executeWorkItem({ ...item('agent.gemini', 'write src/b.js=export const b = 2'), test_command: `test -f src/b.js && ! test -e ${dataDir}/runner-token` }, opts);
    expect(out.result.error ?? '').toBe('');
    expect(out.result).toMatchObject({ status: 'success', metrics: { tool_ops_count: 3 } });
    expect(fs.readFileSync(path.join(repo, 'src/b.js'), 'utf8')).toContain('export const b = 2');
  });

  it('its only way out is the egress proxy: the provider\u2019s allowed host answers, any other is refused and named', async () => {
    const server = http.createServer((_req, res) => res.end('api says hi\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as AddressInfo;
    try {
      const allowed = setup({ sandbox, homesDir: dataDir, egressAllow: { claude: [`127.0.0.1:${port}`] } });
      const ok = await executeWorkItem(item('agent.claude', `fetch http://127.0.0.1:${port}/v1`), allowed.opts);
      expect(ok.result.error ?? '').toBe('');
      expect(fs.readFileSync(path.join(allowed.repo, 'fetched.txt'), 'utf8')).toBe('api says hi\n');

      // The same agent with the real allowlist (the provider's API hosts only): refused, rolled back, named.
      const refused = setup({ sandbox, homesDir: dataDir });
      const before = await stateHash(refused.repo);
      const no = await executeWorkItem(item('agent.claude', `fetch http://127.0.0.1:${port}/v1`), refused.opts);
      expect(no.result).toMatchObject({ status: 'failure', error: 'the agent exited 1' });
      expect(no.result.test_output).toContain(`agent-village: network refused for 127.0.0.1:${port} (not an API host of claude)`);
      expect(await stateHash(refused.repo)).toBe(before);
    } finally {
      server.close();
    }
  });
});
