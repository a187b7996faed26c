import fs from 'node:fs';
import path from 'node:path';
import { DtaArtifactSchema, type DtaArtifact } from '../../protocol';
import { RUNS_DIR } from './git-state';

/**
 * `.runs/<runId>/dta/<tool>/<ts>-{baseline,proposed,applied,verify}.json` (+ the patch), written
 * under the top level and kept out of commits (info/exclude). Paths in outputs are relative to
 * the top level, so they mean the same on the runner and in the UI.
 */
export class ArtifactWriter {
  readonly dir: string;
  readonly written: string[] = [];
  private readonly stamp: string;

  constructor(
    private readonly root: string,
    runId: string,
    tool: string,
    now: Date,
  ) {
    this.dir = path.join(root, RUNS_DIR, runId, 'dta', tool);
    this.stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    fs.mkdirSync(this.dir, { recursive: true });
  }

  /** Writes `<ts>-<name>` and returns its path relative to the top level. */
  write(name: 'baseline.json' | 'proposed.json' | 'proposed.patch' | 'applied.json' | 'verify.json', content: unknown): string {
    const file = path.join(this.dir, `${this.stamp}-${name}`);
    fs.writeFileSync(file, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
    const rel = path.relative(this.root, file).split(path.sep).join('/');
    this.written.push(rel);
    return rel;
  }

  absolute(rel: string): string {
    return path.join(this.root, rel);
  }
}

/**
 * The JSON artifacts of a run, with their content, for its events (a control-plane run's worktree
 * is removed when it ends; the UI offers these as downloads). The patch travels on its own.
 */
export function readArtifacts(root: string, paths: readonly string[]): DtaArtifact[] {
  const out: DtaArtifact[] = [];
  for (const rel of paths) {
    if (!rel.endsWith('.json')) continue;
    try {
      const content = fs.readFileSync(path.join(root, rel), 'utf8');
      const a = DtaArtifactSchema.safeParse({ path: rel, content });
      if (a.success) out.push(a.data);
    } catch {
      // A missing artifact is simply not offered.
    }
  }
  return out;
}
