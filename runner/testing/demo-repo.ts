import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The lamplighter demo repository's files, read as data (the runner never imports server/ code). */
export const DEMO_REPO_DIR = fileURLToPath(new URL('../../server/demo/repo', import.meta.url));

/** Every file of the demo repository, keyed by its '/'-separated relative path (for makeSampleRepo). */
export function demoRepoFiles(dir = DEMO_REPO_DIR): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) out[child] = fs.readFileSync(path.join(dir, child), 'utf8');
    }
  };
  walk('');
  return out;
}

/** The fake Claude Code CLI the adapter tests launch through AGENT_RUNNER_CLAUDE_BIN. */
export const FAKE_CLAUDE_PATH = fileURLToPath(new URL('../../e2e/fixtures/fake-agent/fake-claude.mjs', import.meta.url));
