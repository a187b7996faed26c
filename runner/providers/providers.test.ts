import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AV_HOOK_PATH, HOOK_TOKEN_ENV, HOOK_URL_ENV } from '../hooks';
import { FAKE_CLAUDE_PATH } from '../testing/demo-repo';
import { createCommand, captureLogger, makeTempDir, removeTempDir } from '../testing/fixtures';
import { claudeProvider } from './claude';
import { binOverrideEnv, parseVersion, renderTaskPrompt } from './cli';
import { codexProvider } from './codex';
import { geminiProvider } from './gemini';
import { defaultProviders, detectAll } from './index';
import { shellProvider } from './shell';
import type { ProviderLaunchContext } from './types';

const FAKE_CLAUDE = FAKE_CLAUDE_PATH;

/** The hook command every CLI config carries: absolute node and av-hook.mjs, bash-quoted. */
const hookCmd = (mode: string) => `'${process.execPath}' '${AV_HOOK_PATH}' '${mode}'`;
const HOOK = { url: 'http://127.0.0.1:4567/hook', token: 'tok_abc' };
const BASE_ENV = { PATH: '/usr/bin:/bin', HOME: '/h', TERM: 'xterm-256color', AGENT_VILLAGE_SESSION_ID: 'sess_x' };

describe('provider adapters: exact argv, env and files', () => {
  let tmp: string;
  let home: string;
  let ctx: ProviderLaunchContext;
  beforeEach(async () => {
    tmp = await makeTempDir('providers');
    home = path.join(tmp, 'home');
    fs.mkdirSync(home);
    fs.writeFileSync(path.join(home, '.bashrc'), '# base\n');
    const command = createCommand({ repo_source: '/nowhere', task: { title: 'Fix the lamps', goal: 'Make lamps relight at dusk.', acceptance: ['npm test passes'] } });
    ctx = { session_id: command.session_id, home, cwd: path.join(tmp, 'wt', 'src'), worktree_path: path.join(tmp, 'wt'), env: { ...BASE_ENV, HOME: home }, command, hook: HOOK, secrets: { ANTHROPIC_API_KEY: 'sk-test', PATH: '/secret-cannot-replace-path' } };
  });
  afterEach(async () => {
    await removeTempDir(tmp);
  });

  const PROMPT = 'Fix the lamps\n\nMake lamps relight at dusk.\n\nDone when:\n- npm test passes';
  const hookEnv = { [HOOK_URL_ENV]: HOOK.url, [HOOK_TOKEN_ENV]: HOOK.token };

  it('renders the task as the first prompt', () => {
    expect(renderTaskPrompt(ctx.command.task)).toBe(PROMPT);
    expect(renderTaskPrompt({ title: 'only a title' })).toBe('only a title');
    expect(renderTaskPrompt({ title: '' })).toBe('');
  });

  it('claude: `claude <isolation> --settings <home>/.agent-village/claude-settings.json -- <prompt>` with hooks for every event', async () => {
    const p = claudeProvider({ PATH: '' });
    await p.prepare?.(ctx);
    const launch = p.launch(ctx);
    const settingsFile = path.join(home, '.agent-village', 'claude-settings.json');
    expect(launch.file).toBe('claude');
    expect(launch.args).toEqual(['--setting-sources', 'user', '--strict-mcp-config', '--disable-slash-commands', '--settings', settingsFile, '--', PROMPT]);
    const quiet = { DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1' };
    expect(launch.env).toEqual({ ...BASE_ENV, HOME: home, ANTHROPIC_API_KEY: 'sk-test', ...hookEnv, ...quiet });
    expect(launch.providerCredentials).toEqual({ ANTHROPIC_API_KEY: 'sk-test' });
    // First run answered: onboarding, theme, the worktree trusted (its MCP servers not enabled), the key approved.
    const state = JSON.parse(fs.readFileSync(path.join(home, '.claude.json'), 'utf8'));
    expect(state).toMatchObject({ hasCompletedOnboarding: true, theme: 'dark', customApiKeyResponses: { approved: ['sk-test'], rejected: [] } });
    for (const dir of [ctx.worktree_path, ctx.cwd]) expect(state.projects[dir]).toMatchObject({ hasTrustDialogAccepted: true, enableAllProjectMcpServers: false });
    expect(fs.statSync(settingsFile).mode & 0o777).toBe(0o600);
    const command = hookCmd('claude');
    const report = (matcher?: string) => [{ ...(matcher ? { matcher } : {}), hooks: [{ type: 'command', command, timeout: 10 }] }];
    expect(JSON.parse(fs.readFileSync(settingsFile, 'utf8'))).toEqual({
      hooks: {
        SessionStart: report(),
        UserPromptSubmit: report(),
        PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command, timeout: 1800 }] }],
        PostToolUse: report('*'),
        PostToolUseFailure: report('*'),
        Notification: report(),
        Stop: report(),
        SessionEnd: report(),
      },
    });
    expect(p.capabilities).toMatchObject({ hooks: true, initial_prompt: true });
  });

  it('codex: CODEX_HOME in the session, hooks.json + notify in config.toml, hook trust bypassed for our own hooks', async () => {
    const p = codexProvider({ PATH: '' });
    await p.prepare?.(ctx);
    const launch = p.launch(ctx);
    const codexHome = path.join(home, '.codex');
    expect(launch.file).toBe('codex');
    expect(launch.args).toEqual(['--no-daemon', '--dangerously-bypass-hook-trust', '--', PROMPT]);
    expect(launch.env).toEqual({ ...BASE_ENV, HOME: home, ANTHROPIC_API_KEY: 'sk-test', ...hookEnv, CODEX_HOME: codexHome });
    expect(launch.providerCredentials).toEqual({});
    const command = hookCmd('codex');
    expect(JSON.parse(fs.readFileSync(path.join(codexHome, 'hooks.json'), 'utf8'))).toEqual({
      hooks: Object.fromEntries(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'].map((e) => [e, [{ hooks: [{ type: 'command', command }] }]])),
    });
    expect(fs.readFileSync(path.join(codexHome, 'config.toml'), 'utf8')).toBe(
      [
        '# Written by agent-runner for this session; removed with it.',
        `notify = [${JSON.stringify(process.execPath)}, ${JSON.stringify(AV_HOOK_PATH)}, "codex-notify"]`,
        'check_for_update_on_startup = false',
        '',
        '[analytics]',
        'enabled = false',
        '',
        `[projects.${JSON.stringify(ctx.worktree_path)}]`,
        'trust_level = "trusted"',
        '',
      ].join('\n'),
    );
  });

  it('codex: an OpenAI key from the org goes to a model provider that reads it from the environment, never into a file', async () => {
    const withKey = { ...ctx, secrets: { OPENAI_API_KEY: 'sk-proj-xyz' } };
    const p = codexProvider({ PATH: '' });
    await p.prepare?.(withKey);
    const launch = p.launch(withKey);
    expect(launch.providerCredentials).toEqual({ OPENAI_API_KEY: 'sk-proj-xyz' });
    expect(launch.env.OPENAI_API_KEY).toBe('sk-proj-xyz');
    const toml = fs.readFileSync(path.join(home, '.codex', 'config.toml'), 'utf8');
    expect(toml).toContain('model_provider = "agent-village-openai"');
    expect(toml).toContain('env_key = "OPENAI_API_KEY"');
    expect(toml).not.toContain('sk-proj-xyz');
    expect(fs.existsSync(path.join(home, '.codex', 'auth.json'))).toBe(false);
  });

  it('a repository that brings its own .codex/ or .gemini/ is not trusted, so its hooks, MCP servers and commands stay off', async () => {
    fs.mkdirSync(path.join(ctx.worktree_path, '.codex'), { recursive: true });
    fs.mkdirSync(path.join(ctx.cwd, '.gemini'), { recursive: true });
    await codexProvider({ PATH: '' }).prepare?.(ctx);
    await geminiProvider({ PATH: '' }).prepare?.(ctx);
    expect(fs.readFileSync(path.join(home, '.codex', 'config.toml'), 'utf8')).toContain('trust_level = "untrusted"');
    expect(JSON.parse(fs.readFileSync(path.join(home, '.gemini', 'trustedFolders.json'), 'utf8'))).toEqual({ [ctx.worktree_path]: 'DO_NOT_TRUST' });
  });

  it('gemini: GEMINI_CLI_HOME = the session home, hooks in <home>/.gemini/settings.json, --prompt-interactive=<prompt>', async () => {
    const p = geminiProvider({ PATH: '' });
    await p.prepare?.(ctx);
    const launch = p.launch(ctx);
    expect(launch.file).toBe('gemini');
    expect(launch.args).toEqual([`--prompt-interactive=${PROMPT}`]);
    expect(launch.env).toEqual({ ...BASE_ENV, HOME: home, ANTHROPIC_API_KEY: 'sk-test', ...hookEnv, GEMINI_CLI_HOME: home });
    expect(JSON.parse(fs.readFileSync(path.join(home, '.gemini', 'trustedFolders.json'), 'utf8'))).toEqual({ [ctx.worktree_path]: 'TRUST_FOLDER' });
    const command = hookCmd('gemini');
    const h = (event: string, timeout: number, matcher?: string) => [{ ...(matcher ? { matcher } : {}), hooks: [{ name: `agent-village-${event}`, type: 'command', command, timeout }] }];
    expect(JSON.parse(fs.readFileSync(path.join(home, '.gemini', 'settings.json'), 'utf8'))).toEqual({
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      security: { folderTrust: { enabled: true } },
      hooksConfig: { enabled: true },
      hooks: {
        SessionStart: h('SessionStart', 10_000),
        BeforeAgent: h('BeforeAgent', 10_000),
        BeforeTool: h('BeforeTool', 1_800_000, '*'),
        AfterTool: h('AfterTool', 10_000, '*'),
        AfterAgent: h('AfterAgent', 10_000),
        Notification: h('Notification', 10_000),
        SessionEnd: h('SessionEnd', 10_000),
      },
    });
  });

  it('without a hook channel no hook files are written and no hook flags are passed; first-run answers still are', async () => {
    const noHook = { ...ctx, hook: undefined, command: createCommand({ repo_source: '/x', task: { title: '' } }) };
    const args = [claudeProvider({ PATH: '' }), codexProvider({ PATH: '' }), geminiProvider({ PATH: '' })].map(async (p) => {
      await p.prepare?.(noHook);
      return p.launch(noHook).args;
    });
    expect(await Promise.all(args)).toEqual([['--setting-sources', 'user', '--strict-mcp-config', '--disable-slash-commands'], ['--no-daemon'], []]);
    expect(fs.readdirSync(home).sort()).toEqual(['.bashrc', '.claude.json', '.codex', '.gemini']);
    expect(fs.readdirSync(path.join(home, '.codex'))).toEqual(['config.toml']);
    expect(fs.readFileSync(path.join(home, '.codex', 'config.toml'), 'utf8')).not.toContain('notify');
    expect(JSON.parse(fs.readFileSync(path.join(home, '.gemini', 'settings.json'), 'utf8')).hooks).toBeUndefined();
  });

  it('shell: bash with the session .bashrc, which gains a preexec/precmd pair that keeps the token unexported', async () => {
    const p = shellProvider();
    await p.prepare?.(ctx);
    const launch = p.launch(ctx);
    expect(launch).toEqual({
      file: '/bin/bash',
      args: ['--noprofile', '--rcfile', path.join(home, '.bashrc'), '-i'],
      env: { ...BASE_ENV, HOME: home, ANTHROPIC_API_KEY: 'sk-test', SHELL: '/bin/bash' },
      providerCredentials: {},
    });
    const rc = fs.readFileSync(path.join(home, '.bashrc'), 'utf8');
    expect(rc.startsWith('# base\n')).toBe(true);
    expect(rc).toContain(`__av_hook_token='${HOOK.token}'`);
    expect(rc).toContain(`'${process.execPath}' '${AV_HOOK_PATH}' shell "$@"`);
    expect(rc).toContain("trap '__av_preexec' DEBUG");
    expect(rc).toContain("PROMPT_COMMAND='__av_precmd'");
    expect(rc).not.toMatch(/export .*__av/);
  });
});

describe('detection', () => {
  it('parses the versions the CLIs print', () => {
    expect(parseVersion('2.1.197 (Claude Code)\n')).toBe('2.1.197');
    expect(parseVersion('codex-cli 0.169.0\n')).toBe('0.169.0');
    expect(parseVersion('0.61.0\n')).toBe('0.61.0');
    expect(parseVersion('0.0.0-fake (Claude Code)')).toBe('0.0.0-fake');
    expect(parseVersion('')).toBeUndefined();
  });

  it('AGENT_RUNNER_<ID>_BIN points an adapter at a binary; missing binaries are "not found"; versions go to provider_info', async () => {
    expect(binOverrideEnv('claude')).toBe('AGENT_RUNNER_CLAUDE_BIN');
    const env = { PATH: process.env.PATH ?? '', AGENT_RUNNER_CLAUDE_BIN: FAKE_CLAUDE, AGENT_RUNNER_CODEX_BIN: '/does/not/exist' };
    const found = await detectAll([shellProvider(), claudeProvider(env), codexProvider(env), geminiProvider({ PATH: '/nonexistent' })], captureLogger());
    expect([...found.providers.keys()].sort()).toEqual(['claude', 'shell']);
    expect(found.info.map((i) => i.id)).toEqual(['claude', 'shell']);
    // The fake agent's version is outside the range the real adapter was written for: flagged.
    expect(found.info[0]).toEqual({ id: 'claude', version: '0.0.0-fake', version_range: '>=2.1.300 <2.2.0', version_supported: false });
    expect(found.info[1]).toMatchObject({ id: 'shell', version_range: null, version_supported: true });
    const claude = found.providers.get('claude');
    expect(claude?.launch({ session_id: 's', home: '/h', cwd: '/w', worktree_path: '/w', env: {}, command: createCommand({ repo_source: '/x', task: { title: '' } }) }).file).toBe(FAKE_CLAUDE);
  });

  it('defaultProviders offers shell, claude, codex and gemini', () => {
    expect(defaultProviders().map((p) => p.id)).toEqual(['shell', 'claude', 'codex', 'gemini']);
  });
});
