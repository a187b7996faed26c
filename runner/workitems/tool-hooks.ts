import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { hookEnv, type HookCall, type HookReply, type HookServer } from '../hooks';
import { allowReply, denyReply } from '../hooks/hook-bridge';
import { claudeSettings, claudeStateJson } from '../providers/claude';
import { codexHome, codexHooksJson } from '../providers/codex';
import { geminiSettings, geminiSettingsPath } from '../providers/gemini';

/**
 * max_tool_ops for real CLIs: the same hook channel sessions use (runner/hooks), one endpoint and
 * token per agent work item, and the CLI's own hook config written into the step's HOME. Every
 * tool call a CLI makes passes its PreToolUse (Gemini: BeforeTool) and, once run, its PostToolUse
 * / PostToolUseFailure (Gemini: AfterTool) hook; a call is counted once: max(pre, post), since a
 * call the hook denied has no post and a CLI that reports only afterwards has no pre.
 * Past the budget, PreToolUse is answered "deny": the tool never runs, and admission then denies
 * the step anyway.
 */

const PRE_TOOL_EVENTS = new Set(['PreToolUse', 'BeforeTool']);
const POST_TOOL_EVENTS = new Set(['PostToolUse', 'PostToolUseFailure', 'AfterTool']);
/** The CLIs whose hooks report tool calls (av-hook.mjs names them in its first argument). */
const HOOKED_CLIS = new Set(['claude', 'codex', 'gemini']);

export interface ToolHookWatch {
  /** Variables the agent's process needs to reach the channel (and CODEX_HOME for Codex). */
  env: Record<string, string>;
  /** The hook server's Unix socket, to bind into the sandbox (its own network namespace has no 127.0.0.1 of ours). */
  socket: string | null;
  /** Tool calls the hooks reported so far. */
  count(): number;
  close(): void;
}

export class ToolOpCounter {
  private pre = 0;
  private post = 0;

  constructor(private readonly budget: number) {}

  get count(): number {
    return Math.max(this.pre, this.post);
  }

  /** The hook's answer: allow (the sandbox is the boundary, admission the judge) until the budget is spent. */
  onCall(call: HookCall): HookReply {
    if (!HOOKED_CLIS.has(call.provider)) return {};
    if (POST_TOOL_EVENTS.has(call.event)) {
      this.post += 1;
      return {};
    }
    if (!PRE_TOOL_EVENTS.has(call.event)) return {};
    this.pre += 1;
    if (this.pre > this.budget) return denyReply(call.provider, call.event, `Exceeded max tool ops: this step may make ${this.budget} tool calls`);
    return allowReply(call.provider, call.event, 'a quest step in its sandbox');
  }
}

/** The hook config each CLI reads from HOME, as sessions get it (runner/providers); unknown providers get Claude Code's. */
export function writeHookConfig(provider: string, home: string, worktree: string): Record<string, string> {
  const put = (file: string, value: unknown) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
  };
  if (provider === 'gemini') {
    put(geminiSettingsPath(home), geminiSettings({ hooks: true, auth: null }));
    return {};
  }
  if (provider === 'codex') {
    put(path.join(codexHome(home), 'hooks.json'), codexHooksJson());
    return { CODEX_HOME: codexHome(home) };
  }
  // Claude Code reads user settings from ~/.claude/settings.json in -p mode too; ~/.claude.json trusts the worktree.
  put(path.join(home, '.claude', 'settings.json'), claudeSettings());
  put(path.join(home, '.claude.json'), claudeStateJson([worktree]));
  return {};
}

/** Opens a hook endpoint for one agent run; close it when the agent has ended (its token dies with it). */
export function watchToolHooks(hooks: HookServer, opts: { provider: string; home: string; worktree: string; budget: number }): ToolHookWatch {
  const id = `wi-${crypto.randomBytes(9).toString('base64url')}`;
  const counter = new ToolOpCounter(opts.budget);
  const endpoint = hooks.register(id, (call) => counter.onCall(call));
  const extra = writeHookConfig(opts.provider, opts.home, opts.worktree);
  return {
    env: { ...hookEnv(endpoint), ...extra },
    socket: endpoint.socket ?? null,
    count: () => counter.count,
    close: () => hooks.unregister(id),
  };
}
