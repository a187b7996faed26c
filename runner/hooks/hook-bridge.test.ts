import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RunnerEventBody } from '../../protocol';
import { HookBridge, type HookSink } from './hook-bridge';
import type { HookCall } from './hook-server';

const WT = '/srv/wt/sess_1';
const sample = (name: string) => fs.readFileSync(new URL(`./samples/${name}`, import.meta.url), 'utf8');

function harness(provider: HookCall['provider'] & ('claude' | 'codex' | 'gemini' | 'shell') = 'claude') {
  const out: Array<RunnerEventBody | { activity: string; detail: string } | { file: string; reason: string }> = [];
  const sink: HookSink = {
    emit: (b) => void out.push(b),
    activity: (activity, detail) => void out.push({ activity, detail }),
    fileTouched: (file, reason) => void out.push({ file, reason }),
  };
  const bridge = new HookBridge({ provider, worktree: WT, sink });
  const call = (event: string, payload: Record<string, unknown>) => bridge.handle({ provider, event, payload });
  return { out, bridge, call };
}

describe('HookBridge: Claude Code hooks', () => {
  it('Write/Edit/MultiEdit/NotebookEdit are writes, Read is a read; paths become worktree-relative, outside ones are dropped', () => {
    const { out, call } = harness();
    call('PostToolUse', { cwd: `${WT}/src`, tool_name: 'Write', tool_input: { file_path: `${WT}/src/core/lamp.js` }, tool_response: {} });
    call('PostToolUse', { cwd: `${WT}/src`, tool_name: 'Edit', tool_input: { file_path: 'api/x.js' }, tool_response: {} });
    call('PostToolUse', { cwd: WT, tool_name: 'MultiEdit', tool_input: { file_path: `${WT}/README.md` }, tool_response: {} });
    call('PostToolUse', { cwd: WT, tool_name: 'NotebookEdit', tool_input: { notebook_path: `${WT}/nb/a.ipynb` }, tool_response: {} });
    call('PostToolUse', { cwd: WT, tool_name: 'Read', tool_input: { file_path: `${WT}/docs/guide.md` }, tool_response: {} });
    call('PostToolUse', { cwd: WT, tool_name: 'Write', tool_input: { file_path: '/etc/passwd' }, tool_response: {} });
    call('PostToolUse', { cwd: WT, tool_name: 'Write', tool_input: { file_path: `${WT}/../other/x` }, tool_response: {} });
    call('PostToolUseFailure', { cwd: WT, tool_name: 'Write', tool_input: { file_path: `${WT}/failed.js` }, error: 'nope' });
    expect(out).toEqual([
      { file: 'src/core/lamp.js', reason: 'write' },
      { file: 'src/api/x.js', reason: 'write' },
      { file: 'README.md', reason: 'write' },
      { file: 'nb/a.ipynb', reason: 'write' },
      { file: 'docs/guide.md', reason: 'read' },
    ]);
  });

  it('PreToolUse answers with the allow decision and marks the agent working; Notification and Stop mean waiting for input', () => {
    const { out, call } = harness();
    expect(call('UserPromptSubmit', { prompt: 'fix it' })).toEqual({});
    const reply = call('PreToolUse', { tool_name: 'Write', tool_input: { file_path: `${WT}/a` }, tool_use_id: 't1' });
    expect(JSON.parse(reply.stdout ?? '')).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'allowed by Agent Village' },
    });
    call('Stop', { stop_hook_active: false, last_assistant_message: 'All done.' });
    call('Notification', { message: 'Claude is waiting for your input', notification_type: 'idle_prompt' });
    call('Notification', { message: 'Claude needs your permission to use Bash', notification_type: 'permission_prompt' });
    expect(out).toEqual([
      { activity: 'working', detail: 'working on a prompt' },
      { activity: 'working', detail: 'using Write' },
      { activity: 'waiting_for_input', detail: 'turn ended: All done.' },
      { activity: 'waiting_for_input', detail: 'Claude is waiting for your input' },
      { activity: 'waiting_for_input', detail: 'Claude needs your permission to use Bash' },
    ]);
  });

  it('a Bash test command: TEST_RUN_STARTED at PreToolUse, FINISHED with counts from tool_response at PostToolUse', () => {
    const { out, call } = harness();
    call('PreToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_use_id: 't1' });
    call('PreToolUse', { tool_name: 'Bash', tool_input: { command: 'git status' }, tool_use_id: 't2' });
    call('PostToolUse', { tool_name: 'Bash', tool_input: { command: 'git status' }, tool_use_id: 't2', tool_response: { stdout: 'clean' } });
    call('PostToolUse', { tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_use_id: 't1', tool_response: { stdout: sample('node-tap.txt'), stderr: '', interrupted: false } });
    const tests = out.filter((e) => 'type' in e);
    expect(tests).toEqual([
      { type: 'TEST_RUN_STARTED', command: 'npm test' },
      { type: 'TEST_RUN_FINISHED', command: 'npm test', passed: 7, failed: 0, exit_code: 0 },
    ]);
  });

  it('a failing test run arrives as PostToolUseFailure with "Exit code N"', () => {
    const { out, call } = harness();
    call('PreToolUse', { tool_name: 'Bash', tool_input: { command: 'npx vitest run' }, tool_use_id: 't1' });
    call('PostToolUseFailure', { tool_name: 'Bash', tool_input: { command: 'npx vitest run' }, tool_use_id: 't1', error: `Exit code 1\n${sample('vitest-fail.txt')}` });
    expect(out.filter((e) => 'type' in e).at(-1)).toEqual({ type: 'TEST_RUN_FINISHED', command: 'npx vitest run', passed: 3, failed: 1, exit_code: 1 });
  });
});

describe('HookBridge: Codex and Gemini CLI', () => {
  it('Codex: apply_patch headers are writes, Bash runs tests, PreToolUse gets no output (Codex rejects "allow"), notify ends the turn', () => {
    const { out, call } = harness('codex');
    const patch = '*** Begin Patch\n*** Update File: src/core/lamp.js\n@@\n-a\n+b\n*** Add File: docs/new.md\n+hi\n*** End Patch\n';
    expect(call('PreToolUse', { cwd: WT, tool_name: 'apply_patch', tool_input: { command: patch }, tool_use_id: 'c1' })).toEqual({});
    call('PostToolUse', { cwd: WT, tool_name: 'apply_patch', tool_input: { command: patch }, tool_use_id: 'c1', tool_response: 'Success' });
    call('PreToolUse', { cwd: WT, tool_name: 'Bash', tool_input: { command: 'pytest' }, tool_use_id: 'c2' });
    call('PostToolUse', { cwd: WT, tool_name: 'Bash', tool_input: { command: 'pytest' }, tool_use_id: 'c2', tool_response: sample('pytest-fail.txt') });
    call('notify', { type: 'agent-turn-complete', 'last-assistant-message': 'Patched.' });
    expect(out).toEqual([
      { activity: 'working', detail: 'using apply_patch' },
      { file: 'src/core/lamp.js', reason: 'write' },
      { file: 'docs/new.md', reason: 'write' },
      { activity: 'working', detail: 'using Bash' },
      { type: 'TEST_RUN_STARTED', command: 'pytest' },
      { type: 'TEST_RUN_FINISHED', command: 'pytest', passed: 3, failed: 1, exit_code: null },
      { activity: 'waiting_for_input', detail: 'turn ended: Patched.' },
    ]);
  });

  it('Gemini: write_file/replace/read_file, run_shell_command with llmContent, BeforeTool gets decision "allow"', () => {
    const { out, call } = harness('gemini');
    expect(JSON.parse(call('BeforeTool', { tool_name: 'write_file', tool_input: { file_path: `${WT}/src/a.js` } }).stdout ?? '')).toEqual({ decision: 'allow' });
    call('AfterTool', { cwd: WT, tool_name: 'write_file', tool_input: { file_path: `${WT}/src/a.js` }, tool_response: { llmContent: 'ok' } });
    call('AfterTool', { cwd: WT, tool_name: 'replace', tool_input: { file_path: 'src/b.js' }, tool_response: {} });
    call('AfterTool', { cwd: WT, tool_name: 'read_file', tool_input: { file_path: 'README.md' }, tool_response: {} });
    call('AfterTool', { cwd: WT, tool_name: 'run_shell_command', tool_input: { command: 'npm test' }, tool_response: { llmContent: sample('node-tap-fail.txt'), returnDisplay: '' } });
    call('AfterAgent', { prompt: 'x', prompt_response: 'Finished.' });
    expect(out.slice(1)).toEqual([
      { file: 'src/a.js', reason: 'write' },
      { file: 'src/b.js', reason: 'write' },
      { file: 'README.md', reason: 'read' },
      { type: 'TEST_RUN_STARTED', command: 'npm test' },
      { type: 'TEST_RUN_FINISHED', command: 'npm test', passed: 2, failed: 1, exit_code: null },
      { activity: 'waiting_for_input', detail: 'turn ended: Finished.' },
    ]);
  });
});

describe('HookBridge: a person in the shell', () => {
  it('preexec of a test command starts a run; precmd finishes it with counts from the terminal output in between', () => {
    const { out, bridge, call } = harness('shell');
    bridge.observeOutput('ignored: no test running\r\n# pass 99\r\n');
    call('preexec', { text: 'ls -la' });
    call('preexec', { text: 'npm test' });
    for (const chunk of sample('node-spec.txt').replace(/\n/g, '\r\n').match(/[\s\S]{1,50}/g) ?? []) bridge.observeOutput(chunk);
    call('precmd', { text: '0' });
    call('precmd', { text: '0' });
    expect(out).toEqual([
      { type: 'TEST_RUN_STARTED', command: 'npm test' },
      { type: 'TEST_RUN_FINISHED', command: 'npm test', passed: 7, failed: 0, exit_code: 0 },
    ]);
  });

  it('unknown events and payload shapes change nothing', () => {
    const { out, call } = harness();
    expect(call('SomethingNew', { x: 1 })).toEqual({});
    expect(call('PostToolUse', { tool_name: 42, tool_input: 'str' })).toEqual({});
    expect(call('PreToolUse', { tool_name: 'Bash', tool_input: { command: ['not', 'a', 'test'] } })).toBeDefined();
    expect(out.filter((e) => 'type' in e || 'file' in e)).toEqual([]);
  });
});

describe('HookBridge: provider invocations for usage', () => {
  it('every prompt submitted (Claude/Codex UserPromptSubmit, Gemini BeforeAgent) is one invocation; tools and turn ends are not', () => {
    let invocations = 0;
    for (const [provider, prompt, other] of [
      ['claude', 'UserPromptSubmit', 'Stop'],
      ['codex', 'UserPromptSubmit', 'notify'],
      ['gemini', 'BeforeAgent', 'AfterAgent'],
    ] as const) {
      const bridge = new HookBridge({
        provider,
        worktree: WT,
        sink: { emit: () => undefined, activity: () => undefined, fileTouched: () => undefined, invocation: () => void (invocations += 1) },
      });
      bridge.handle({ provider, event: prompt, payload: { prompt: 'one' } });
      bridge.handle({ provider, event: 'PreToolUse', payload: { tool_name: 'Read', tool_input: {} } });
      bridge.handle({ provider, event: other, payload: {} });
      bridge.handle({ provider, event: prompt, payload: { prompt: 'two' } });
    }
    expect(invocations).toBe(6);
  });
});
