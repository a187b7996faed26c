/**
 * `av-check deps | secrets`: the runner's offline checks, run by patrols (the runner puts an
 * `av-check` wrapper on the patrol's PATH). Runs in the current directory (the worktree root),
 * prints `path:line: severity: message` lines the findings parser reads, exits 1 on an error.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { checkDeps } from './deps';
import { scanSecrets } from './secrets';
import { formatFinding, type CheckFinding } from './types';

function readText(root: string, rel: string): string | null {
  try {
    return fs.readFileSync(path.join(root, rel), 'utf8');
  } catch {
    return null;
  }
}

function trackedFiles(root: string): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }).split('\0').filter(Boolean);
  } catch {
    // Not a git checkout: every regular file outside .git and node_modules.
    const out: string[] = [];
    const walk = (rel: string) => {
      for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
        if (e.name === '.git' || e.name === 'node_modules') continue;
        const child = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(child);
        else if (e.isFile()) out.push(child);
      }
    };
    walk('');
    return out;
  }
}

function report(title: string, findings: CheckFinding[], footer: string): number {
  const errors = findings.filter((f) => f.severity === 'error');
  const warnings = findings.filter((f) => f.severity === 'warning');
  for (const f of [...errors, ...warnings]) console.log(formatFinding(f));
  console.log(`\n${title}: ${errors.length} error${errors.length === 1 ? '' : 's'}, ${warnings.length} warning${warnings.length === 1 ? '' : 's'}${footer ? ` (${footer})` : ''}`);
  return errors.length ? 1 : 0;
}

function main(argv: string[]): number {
  const root = process.cwd();
  switch (argv[0]) {
    case 'deps': {
      console.log('av-check deps: lockfile consistency and dependency drift (offline)');
      return report('av-check deps', checkDeps({ read: (rel) => readText(root, rel) }), '');
    }
    case 'secrets': {
      console.log('av-check secrets: tracked files scanned with the redaction patterns (offline)');
      const files = trackedFiles(root);
      const { findings, scanned, skipped } = scanSecrets({
        files,
        read: (rel) => {
          try {
            const st = fs.statSync(path.join(root, rel));
            return st.isFile() ? fs.readFileSync(path.join(root, rel)) : null;
          } catch {
            return null;
          }
        },
      });
      return report('av-check secrets', findings, `${scanned} files scanned, ${skipped} skipped (binary or over 1 MB)`);
    }
    default:
      console.error('usage: av-check deps | secrets');
      return 2;
  }
}

process.exitCode = main(process.argv.slice(2));
