import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { firstLine } from '../workspace/git';
import type { ProviderAdapter, ProviderDetection } from './types';

export const BASH_PATH = '/bin/bash';

/** A plain interactive bash in the worktree: the provider that needs no agent CLI. */
export function shellProvider(bashPath = BASH_PATH): ProviderAdapter {
  return {
    id: 'shell',
    detect(): Promise<ProviderDetection> {
      return new Promise((resolve) => {
        try {
          fs.accessSync(bashPath, fs.constants.X_OK);
        } catch {
          return resolve({ available: false });
        }
        execFile(bashPath, ['--version'], { timeout: 5_000, encoding: 'utf8' }, (err, stdout) => {
          if (err) return resolve({ available: true });
          const m = /version\s+(\S+)/.exec(firstLine(stdout));
          resolve({ available: true, version: m?.[1] });
        });
      });
    },
    launch(ctx) {
      // --noprofile/--rcfile: the session's generated .bashrc only, never /etc/profile or the runner user's dotfiles.
      return {
        file: bashPath,
        args: ['--noprofile', '--rcfile', path.join(ctx.home, '.bashrc'), '-i'],
        env: { ...ctx.env, SHELL: bashPath },
      };
    },
  };
}
