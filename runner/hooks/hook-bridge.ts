import fs from 'node:fs';
import path from 'node:path';
import type { ProviderId, RunnerEventBody } from '../../protocol';
import type { HookCall, HookReply } from './hook-server';
import { OutputTail } from '../pty/output-tail';
import { isTestCommand, parseTestCounts } from './test-counts';

/**
 * Turns the agent CLIs' hook calls (and the session shell's preexec/precmd) into protocol events:
 * FILE_TOUCHED, AGENT_ACTIVITY, TEST_RUN_STARTED / TEST_RUN_FINISHED. One per session; it keeps
 * the little state that needs (tests in flight, the current activity).
 */

/** Protocol limits (events.ts) on free text. */
const MAX_DETAIL = 2000;
const MAX_COMMAND = 4096;
/** A shell test's output is kept only while it runs, and only its tail: the summary is at the end. */
export const MAX_CAPTURED_OUTPUT = 1_000_000;
/** Activity details quote the agent briefly; the full text is in the terminal. */
const MAX_QUOTE = 300;

type Kind = 'session_start' | 'prompt' | 'pre_tool' | 'post_tool' | 'post_tool_failure' | 'notification' | 'turn_end' | 'session_end' | 'preexec' | 'precmd' | 'other';

/** Each CLI's event names (read from their packages; README "Provider adapters"). */
const EVENT_KINDS: Record<string, Kind> = {
  // Claude Code (and Codex, whose hooks use the same names and payloads).
  SessionStart: 'session_start',
  UserPromptSubmit: 'prompt',
  PreToolUse: 'pre_tool',
  PostToolUse: 'post_tool',
  PostToolUseFailure: 'post_tool_failure',
  Notification: 'notification',
  Stop: 'turn_end',
  SessionEnd: 'session_end',
  // Gemini CLI.
  BeforeAgent: 'prompt',
  BeforeTool: 'pre_tool',
  AfterTool: 'post_tool',
  AfterAgent: 'turn_end',
  // Codex's legacy `notify` program (agent-turn-complete).
  notify: 'turn_end',
  // The session's bash.
  preexec: 'preexec',
  precmd: 'precmd',
};

/** Tools that write a file, and where their path is. */
const WRITE_TOOLS: Record<string, string[]> = {
  Write: ['file_path'],
  Edit: ['file_path'],
  MultiEdit: ['file_path'],
  NotebookEdit: ['notebook_path', 'file_path'],
  write_file: ['file_path'],
  replace: ['file_path'],
};
const READ_TOOLS: Record<string, string[]> = {
  Read: ['file_path'],
  read_file: ['file_path', 'absolute_path'],
};
/** Tools that run a shell command in `tool_input.command`. */
const SHELL_TOOLS = new Set(['Bash', 'run_shell_command', 'shell', 'exec_command', 'local_shell']);
/** Codex edits files through apply_patch; the paths are in the patch's headers. */
const PATCH_TOOLS = new Set(['apply_patch', 'ApplyPatch']);
const PATCH_FILE_HEADER = /^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** All text a tool response carries (Claude: stdout/stderr; Gemini: llmContent/returnDisplay; Codex: a string). */
export function responseText(response: unknown): string {
  if (typeof response === 'string') return response;
  const r = obj(response);
  return ['stdout', 'stderr', 'output', 'llmContent', 'returnDisplay', 'error', 'content']
    .map((k) => r[k])
    .filter((v): v is string => typeof v === 'string')
    .join('\n');
}

function exitCodeOf(response: unknown): number | null {
  const r = obj(response);
  for (const k of ['exit_code', 'exitCode', 'code']) {
    const v = r[k];
    if (typeof v === 'number' && Number.isInteger(v)) return v;
  }
  const m = /Exit code (\d+)/.exec(responseText(response));
  return m ? Number(m[1]) : null;
}

/**
 * Where the bridge reports. The session owns activity and FILE_TOUCHED (it dedupes them against
 * its idle detection and file watcher); test runs go straight to its event stream.
 */
export interface HookSink {
  emit(body: RunnerEventBody): void;
  activity(activity: 'working' | 'waiting_for_input', detail: string): void;
  /** `file` is relative to the worktree, '/'-separated, never outside it. */
  fileTouched(file: string, reason: 'write' | 'read'): void;
  /** A prompt was submitted to the provider (a turn begins): one provider invocation for usage. */
  invocation?(): void;
}

/** The session's policy gate (runner/approvals/gate.ts): decides shell tool calls that need approval. */
export interface ToolGate {
  toolCall(command: string, cwd: string | undefined): Promise<{ decision: 'allow' | 'deny'; reason: string } | null>;
}

export interface HookBridgeOptions {
  provider: ProviderId;
  worktree: string;
  sink: HookSink;
  /** Without a gate every tool call is allowed (the CLI's own permission prompts still apply). */
  gate?: ToolGate;
  /** Strict tools (runner/dta/strict-tools.ts): the refusal of an edit a DTA covers, or null. */
  strictTools?: (tool: string, input: Record<string, unknown>, cwd: string | undefined) => string | null;
}

interface PendingTest {
  command: string;
}

export class HookBridge {
  private readonly worktreeRoots: string[];
  /** Agent test runs by tool_use_id (or command when a CLI gives no id). */
  private readonly pendingTests = new Map<string, PendingTest>();
  /** A test a person started in the shell: its output is captured until the prompt returns. */
  private shellTest: { command: string; output: OutputTail } | null = null;

  constructor(private readonly opts: HookBridgeOptions) {
    const roots = [path.resolve(opts.worktree)];
    try {
      roots.push(fs.realpathSync(opts.worktree));
    } catch {
      // The worktree may not exist in unit tests; the plain path is enough then.
    }
    this.worktreeRoots = [...new Set(roots)];
  }

  /** Terminal output of the session (before batching); kept only while a shell test runs. */
  observeOutput(data: string): void {
    this.shellTest?.output.append(data);
  }

  /** Like handle(), but a shell tool call that needs approval waits for the session's gate. */
  decide(call: HookCall): HookReply | Promise<HookReply> {
    const command = this.opts.gate && EVENT_KINDS[call.event] === 'pre_tool' ? this.shellCommand(call.payload) : null;
    if (command === null) return this.handle(call);
    this.handle(call);
    return this.gated(call, command);
  }

  handle(call: HookCall): HookReply {
    const kind = EVENT_KINDS[call.event] ?? 'other';
    const p = call.payload;
    switch (kind) {
      case 'prompt':
        this.opts.sink.invocation?.();
        this.setActivity('working', 'working on a prompt');
        return {};
      case 'pre_tool':
        return this.preTool(call);
      case 'post_tool':
      case 'post_tool_failure':
        this.postTool(call, kind === 'post_tool_failure');
        return {};
      case 'notification': {
        const message = str(p.message) ?? 'the agent sent a notification';
        this.setActivity('waiting_for_input', clip(message, MAX_QUOTE));
        return {};
      }
      case 'turn_end': {
        const last = str(p.last_assistant_message) ?? str(p['last-assistant-message']) ?? str(p.prompt_response);
        this.setActivity('waiting_for_input', last ? `turn ended: ${clip(last.trim(), MAX_QUOTE)}` : 'turn ended; waiting for input');
        return {};
      }
      case 'preexec':
        this.preexec(str(p.text) ?? '');
        return {};
      case 'precmd':
        this.precmd(str(p.text) ?? '');
        return {};
      default:
        return {};
    }
  }

  private preTool(call: HookCall): HookReply {
    const p = call.payload;
    const tool = str(p.tool_name) ?? 'a tool';
    this.setActivity('working', `using ${tool}`);
    const strict = WRITE_TOOLS[tool] ? this.opts.strictTools?.(tool, obj(p.tool_input), str(p.cwd)) : null;
    if (strict) {
      this.opts.sink.emit({ type: 'POLICY_BLOCKED', path: clip(firstString(obj(p.tool_input), WRITE_TOOLS[tool]!) ?? '', 4096), rule: 'strict_tools', detail: clip(strict, 2000), outcome: 'prevented' });
      return denyReply(call.provider, call.event, strict);
    }
    const command = this.shellCommand(p);
    if (command !== null && isTestCommand(command)) {
      this.pendingTests.set(this.testKey(p, command), { command });
      this.opts.sink.emit({ type: 'TEST_RUN_STARTED', command: clip(command, MAX_COMMAND) });
    }
    return allowReply(call.provider, call.event);
  }

  /** The hook blocks here while the approval waits; a deny never lets the tool run. */
  private async gated(call: HookCall, command: string): Promise<HookReply> {
    const d = await this.opts.gate!.toolCall(command, str(call.payload.cwd));
    if (!d || d.decision === 'allow') return allowReply(call.provider, call.event, d?.reason);
    // A test run that was announced but will not run is not left hanging.
    this.pendingTests.delete(this.testKey(call.payload, command));
    return denyReply(call.provider, call.event, d.reason);
  }

  private postTool(call: HookCall, failed: boolean): void {
    const p = call.payload;
    const tool = str(p.tool_name) ?? '';
    const input = obj(p.tool_input);
    const cwd = str(p.cwd);
    const writes = WRITE_TOOLS[tool];
    const reads = READ_TOOLS[tool];
    if (!failed && writes) this.touch(firstString(input, writes), cwd, 'write');
    if (!failed && reads) this.touch(firstString(input, reads), cwd, 'read');
    if (!failed && PATCH_TOOLS.has(tool)) {
      const patch = str(input.command) ?? str(input.patch) ?? str(input.input) ?? '';
      for (const m of patch.matchAll(PATCH_FILE_HEADER)) this.touch(m[1].trim(), cwd, 'write');
    }
    const command = this.shellCommand(p);
    if (command === null) return;
    const key = this.testKey(p, command);
    const pending = this.pendingTests.get(key);
    if (!pending && !isTestCommand(command)) return;
    this.pendingTests.delete(key);
    // A CLI that reports only after the fact still gets a start, so every finish has one.
    if (!pending) this.opts.sink.emit({ type: 'TEST_RUN_STARTED', command: clip(command, MAX_COMMAND) });
    const response = failed ? (p.error ?? p.tool_response) : p.tool_response;
    const counts = parseTestCounts(responseText(response));
    // Claude Code reports a non-zero exit as PostToolUseFailure ("Exit code N"); success is exit 0.
    let exitCode = exitCodeOf(response);
    if (exitCode === null && !failed && call.provider === 'claude') exitCode = 0;
    this.opts.sink.emit({
      type: 'TEST_RUN_FINISHED',
      command: clip(command, MAX_COMMAND),
      passed: counts?.passed ?? 0,
      failed: counts?.failed ?? 0,
      exit_code: exitCode,
    });
  }

  private preexec(commandLine: string): void {
    const command = commandLine.trim();
    if (!command || !isTestCommand(command)) return;
    this.shellTest = { command, output: new OutputTail(MAX_CAPTURED_OUTPUT) };
    this.opts.sink.emit({ type: 'TEST_RUN_STARTED', command: clip(command, MAX_COMMAND) });
  }

  private precmd(status: string): void {
    const test = this.shellTest;
    if (!test) return;
    this.shellTest = null;
    const counts = parseTestCounts(test.output.value);
    const code = /^\d+$/.test(status.trim()) ? Number(status.trim()) : null;
    this.opts.sink.emit({ type: 'TEST_RUN_FINISHED', command: clip(test.command, MAX_COMMAND), passed: counts?.passed ?? 0, failed: counts?.failed ?? 0, exit_code: code });
  }

  private shellCommand(p: Record<string, unknown>): string | null {
    if (!SHELL_TOOLS.has(str(p.tool_name) ?? '')) return null;
    const c = obj(p.tool_input).command;
    if (typeof c === 'string') return c;
    // Codex's exec tools take argv arrays (["bash", "-lc", "npm test"]).
    if (Array.isArray(c) && c.every((x) => typeof x === 'string')) return (c as string[]).at(-1) ?? null;
    return null;
  }

  private testKey(p: Record<string, unknown>, command: string): string {
    return str(p.tool_use_id) ?? `cmd:${command}`;
  }

  /** FILE_TOUCHED for a path inside the worktree; paths outside it are not the village's business. */
  private touch(file: string | undefined, cwd: string | undefined, reason: 'write' | 'read'): void {
    if (!file) return;
    const rel = this.relativeToWorktree(file, cwd);
    if (rel === null) return;
    this.opts.sink.fileTouched(rel, reason);
  }

  relativeToWorktree(file: string, cwd?: string): string | null {
    const abs = path.resolve(cwd && path.isAbsolute(cwd) ? cwd : this.worktreeRoots[0], file);
    for (const root of this.worktreeRoots) {
      const rel = path.relative(root, abs);
      if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) {
        const posix = rel.split(path.sep).join('/');
        if (posix.length <= MAX_COMMAND && !posix.split('/').some((s) => s === '' || s === '.' || s === '..')) return posix;
      }
    }
    return null;
  }

  /** The session emits only on a change, so a tool call every second does not flood the stream. */
  private setActivity(activity: 'working' | 'waiting_for_input', detail: string): void {
    this.opts.sink.activity(activity, clip(detail, MAX_DETAIL));
  }
}

function firstString(input: Record<string, unknown>, keys: string[]): string | undefined {
  for (const k of keys) {
    const v = input[k];
    if (typeof v === 'string' && v) return v;
  }
  return undefined;
}

/**
 * The "go ahead" each CLI understands. Claude Code: hookSpecificOutput.permissionDecision "allow".
 * Gemini CLI: decision "allow". Codex rejects permissionDecision "allow" ("unsupported
 * permissionDecision:allow" in its binary), so it gets no output, which means proceed.
 * Tool calls that need approval are answered by the session's gate (denyReply on a no).
 */
export function allowReply(provider: string, event: string, reason = 'allowed by Agent Village'): HookReply {
  if (provider === 'claude' && event === 'PreToolUse') {
    return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: reason } }) };
  }
  if (provider === 'gemini' && event === 'BeforeTool') return { stdout: JSON.stringify({ decision: 'allow' }) };
  return {};
}

/**
 * "Do not run it", in each CLI's format: Claude Code and Codex take permissionDecision "deny"
 * with a reason (shown to the model); Gemini CLI takes decision "deny" with a reason. Any other
 * caller gets exit 2 with the reason on stdout, which every CLI treats as a block.
 */
export function denyReply(provider: string, event: string, reason: string): HookReply {
  if ((provider === 'claude' || provider === 'codex') && event === 'PreToolUse') {
    return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }) };
  }
  if (provider === 'gemini' && event === 'BeforeTool') return { stdout: JSON.stringify({ decision: 'deny', reason }) };
  return { stdout: reason, exit_code: 2 };
}
