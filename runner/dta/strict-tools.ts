import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import type { DtaTool } from '../../protocol';
import { extractLinks, kindOf } from './adapters/link-updater/links';

/**
 * Strict tools: in a session started with `strict_tools`, an agent may not make by hand an edit
 * that a DTA covers — it asks the DTA (av-dta) instead, which measures, gates and verifies. Each
 * rule is a DTA's domain: the paths it covers and a classifier of the change (a link edit, a
 * symbol rename), so ordinary prose or code edits in the same files stay free.
 */
interface DomainRule {
  tool: DtaTool;
  globs: string[];
  /** true when before → after is the kind of change the DTA makes. */
  classify(rel: string, before: string, after: string): boolean;
}

/** Links are what changed, and nothing else: the text with every URL blanked is the same. */
function onlyLinksChanged(rel: string, before: string, after: string): boolean {
  const blank = (text: string) => {
    let out = text;
    for (const l of [...extractLinks(rel, text)].reverse()) out = out.slice(0, l.start) + '\u0000' + out.slice(l.end);
    return out;
  };
  const a = extractLinks(rel, before).map((l) => l.url);
  const b = extractLinks(rel, after).map((l) => l.url);
  return JSON.stringify(a) !== JSON.stringify(b) && blank(before) === blank(after);
}

const IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*/g;

/** Same text except identifiers, and every changed identifier maps consistently to one new name. */
function onlyIdentifierRenamed(_rel: string, before: string, after: string): boolean {
  if (before.replace(IDENTIFIER, '\u0000') !== after.replace(IDENTIFIER, '\u0000')) return false;
  const a = before.match(IDENTIFIER) ?? [];
  const b = after.match(IDENTIFIER) ?? [];
  const map = new Map<string, string>();
  let renamed = false;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    if (map.has(a[i]!) && map.get(a[i]!) !== b[i]) return false;
    map.set(a[i]!, b[i]!);
    renamed = true;
  }
  return renamed;
}

export const STRICT_DOMAINS: DomainRule[] = [
  { tool: 'link_updater', globs: ['**/*.{html,htm,css}'], classify: (rel, a, b) => kindOf(rel) !== null && onlyLinksChanged(rel, a, b) },
  { tool: 'intra_repo_link_fixer', globs: ['**/*.{md,markdown}'], classify: onlyLinksChanged },
  { tool: 'rename_refactor', globs: ['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}'], classify: onlyIdentifierRenamed },
];

const matchers = STRICT_DOMAINS.map((d) => ({ d, match: picomatch(d.globs, { dot: true }) }));

/** The DTA that must make this edit, or null when it is a free edit. `rel` is worktree-relative. */
export function dtaForEdit(rel: string, before: string, after: string): DtaTool | null {
  const posix = rel.split(path.sep).join('/');
  for (const { d, match } of matchers) if (match(posix) && d.classify(posix, before, after)) return d.tool;
  return null;
}

/** Whether a file lies in any DTA's domain (its paths only; the classifier needs before and after). */
export function inStrictDomain(rel: string): boolean {
  const posix = rel.split(path.sep).join('/');
  return matchers.some(({ match }) => match(posix));
}

/** What the agent is told when its edit is refused. */
export function strictRefusal(tool: DtaTool, rel: string): string {
  return `agent-village: strict tools: this edit of ${rel} is what the ${tool} DTA does; do not edit it by hand — run \`av-dta schema ${tool}\` and \`av-dta run -\` with a dry-run first`;
}

const s = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * A provider's write tool call (Claude Edit/MultiEdit/Write, Gemini replace/write_file) in a
 * strict-tools session: the refusal to send back, or null when the edit is free. The path must be
 * inside the worktree; the "before" of a whole-file write is the file as it is now.
 */
export function strictToolRefusal(worktree: string, tool: string, input: Record<string, unknown>, cwd: string | undefined, readFile: (abs: string) => string | null): string | null {
  const file = s(input.file_path) ?? s(input.absolute_path);
  if (!file) return null;
  const abs = path.resolve(cwd ?? worktree, file);
  const rel = path.relative(worktree, abs);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const pairs: Array<[string, string]> = [];
  if (tool === 'Edit' || tool === 'replace') pairs.push([s(input.old_string) ?? '', s(input.new_string) ?? '']);
  else if (tool === 'MultiEdit' && Array.isArray(input.edits)) for (const e of input.edits as Array<Record<string, unknown>>) pairs.push([s(e.old_string) ?? '', s(e.new_string) ?? '']);
  else if (tool === 'Write' || tool === 'write_file') pairs.push([readFile(abs) ?? '', s(input.content) ?? '']);
  for (const [before, after] of pairs) {
    const dta = dtaForEdit(rel, before, after);
    if (dta) return strictRefusal(dta, rel.split(path.sep).join('/'));
  }
  return null;
}

/** The hook bridge's strictTools option for one session's worktree. */
export function strictToolsFor(worktree: string): (tool: string, input: Record<string, unknown>, cwd: string | undefined) => string | null {
  return (tool, input, cwd) =>
    strictToolRefusal(worktree, tool, input, cwd, (abs) => {
      try {
        return fs.readFileSync(abs, 'utf8');
      } catch {
        return null;
      }
    });
}
