import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AV_HOOK_PATH } from '../hooks';
import type { HookEndpoint } from '../hooks/hook-server';
import { bashQuote } from '../pty/clean-env';
import { firstLine } from '../workspace/git';
import type { ProviderAdapter, ProviderDetection } from './types';

export const BASH_PATH = '/bin/bash';

/**
 * Words that make a command line worth telling the runner about. Bash only pre-filters (starting
 * node for every `ls` would slow the prompt); the runner decides exactly (isTestCommand).
 */
const TEST_WORDS = 'test|vitest|jest|mocha|pytest';

/**
 * Appended to the session's .bashrc: a DEBUG trap (preexec) sends the command line before a
 * possible test command runs, PROMPT_COMMAND (precmd) its exit status when the prompt returns; the
 * runner reads the pass/fail counts from the terminal output in between. The endpoint stays in
 * unexported shell variables, so programs the person runs never see the token.
 */
export function renderBashHooks(endpoint: HookEndpoint, nodePath = process.execPath, hookPath = AV_HOOK_PATH): string {
  return [
    '# Agent Village: report test runs typed in this terminal (TEST_RUN_STARTED / TEST_RUN_FINISHED).',
    `__av_hook_url=${bashQuote(endpoint.url)}`,
    `__av_hook_token=${bashQuote(endpoint.token)}`,
    `__av_hook() { AGENT_VILLAGE_HOOK_URL="$__av_hook_url" AGENT_VILLAGE_HOOK_TOKEN="$__av_hook_token" ${bashQuote(nodePath)} ${bashQuote(hookPath)} shell "$@" </dev/null >/dev/null 2>&1; }`,
    '__av_at_prompt=',
    '__av_test_running=',
    '__av_preexec() {',
    // Only the first command after a prompt, never completion or our own PROMPT_COMMAND.
    '  [[ -z $__av_at_prompt || -n ${COMP_LINE-} || $BASH_COMMAND == __av_precmd* ]] && return 0',
    '  __av_at_prompt=',
    '  local line',
    '  line=$(HISTTIMEFORMAT= builtin history 1)',
    '  [[ $line =~ ^[[:space:]]*[0-9]+[*]?[[:space:]]+(.*)$ ]] && line=${BASH_REMATCH[1]}',
    // A line kept out of history (HISTCONTROL=ignorespace) would show the previous command.
    '  [[ $line == *"$BASH_COMMAND"* ]] || line=$BASH_COMMAND',
    `  if [[ $line =~ (${TEST_WORDS}) ]]; then __av_test_running=1; __av_hook preexec "$line"; fi`,
    '  return 0',
    '}',
    '__av_precmd() {',
    '  local status=$?',
    '  if [[ -n $__av_test_running ]]; then __av_test_running=; __av_hook precmd "$status"; fi',
    '  __av_at_prompt=1',
    '}',
    "trap '__av_preexec' DEBUG",
    "PROMPT_COMMAND='__av_precmd'",
    '',
  ].join('\n');
}

/** A plain interactive bash in the worktree: the provider that needs no agent CLI. */
export function shellProvider(bashPath = BASH_PATH): ProviderAdapter {
  return {
    id: 'shell',
    // Any bash will do: the hooks use only the DEBUG trap and PROMPT_COMMAND.
    versionRange: null,
    capabilities: { hooks: true, initial_prompt: false, transcript: false, signals: ['tests_run'] },
    detect(): Promise<ProviderDetection> {
      return new Promise((resolve) => {
        try {
          fs.accessSync(bashPath, fs.constants.X_OK);
        } catch {
          return resolve({ available: false });
        }
        execFile(bashPath, ['--version'], { timeout: 5_000, encoding: 'utf8' }, (err, stdout) => {
          if (err) return resolve({ available: true, path: bashPath });
          const m = /version\s+(\S+)/.exec(firstLine(stdout));
          resolve({ available: true, path: bashPath, version: m?.[1] });
        });
      });
    },
    async prepare(ctx) {
      if (!ctx.hook) return;
      await fs.promises.appendFile(path.join(ctx.home, '.bashrc'), `\n${renderBashHooks(ctx.hook)}`);
    },
    launch(ctx) {
      // --noprofile/--rcfile: the session's generated .bashrc only, never /etc/profile or the runner user's dotfiles.
      return {
        file: bashPath,
        args: ['--noprofile', '--rcfile', path.join(ctx.home, '.bashrc'), '-i'],
        env: { ...(ctx.secrets ?? {}), ...ctx.env, SHELL: bashPath },
        providerCredentials: {},
      };
    },
  };
}
