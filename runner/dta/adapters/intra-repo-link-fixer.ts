import GithubSlugger from 'github-slugger';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { toString } from 'mdast-util-to-string';
import path from 'node:path';
import { visit } from 'unist-util-visit';
import type { DtaCounts } from '../../../protocol/dta';
import { DTA_PARAMS_SCHEMAS, DTA_SUMMARIES } from '../../../protocol/dta-params';
import { git } from '../../workspace/git';
import type { Adapter, Files, Measure, MeasureContext } from '../types';
import { extractLinks, type FoundLink } from './link-updater/links';

/**
 * intra_repo_link_fixer: relative Markdown links (and their #anchors) to files that moved. The
 * moves come from the invocation or from git's rename detection since a revision. Verified by
 * parsing every Markdown file again and checking that every local link target exists.
 */
export interface IntraRepoLinkFixerParams {
  /** old path → new path (files or folders, relative to the top level). */
  moves?: Record<string, string>;
  /** A revision: the renames git detects between it and HEAD are the moves. */
  since?: string;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

interface LocalLink {
  link: FoundLink;
  /** The target's path from the top level ('' for the file itself). */
  target: string;
  anchor: string | null;
  rawPath: string;
}

function localLinks(rel: string, text: string): LocalLink[] {
  const out: LocalLink[] = [];
  for (const link of extractLinks(rel, text)) {
    const url = link.url.trim();
    if (!url || SCHEME.test(url) || url.startsWith('//')) continue;
    const hash = url.indexOf('#');
    const rawPath = (hash >= 0 ? url.slice(0, hash) : url).split('?')[0];
    const anchor = hash >= 0 ? url.slice(hash + 1) : null;
    let decoded = rawPath;
    try {
      decoded = decodeURI(rawPath);
    } catch {
      // A malformed escape: checked as written.
    }
    const target = rawPath === '' ? rel : decoded.startsWith('/') ? path.posix.normalize(decoded.slice(1)) : path.posix.normalize(path.posix.join(path.posix.dirname(rel), decoded));
    out.push({ link, target: target.replace(/\/$/, ''), anchor, rawPath });
  }
  return out;
}

/** GitHub's heading slugs (github-slugger), per file. */
function anchorsOf(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const out = new Set<string>();
  visit(fromMarkdown(text), 'heading', (h) => {
    out.add(slugger.slug(toString(h)));
  });
  return out;
}

function makeResolver(ctx: MeasureContext) {
  const dirs = new Set<string>();
  for (const f of ctx.allFiles) for (let d = path.posix.dirname(f); d !== '.'; d = path.posix.dirname(d)) dirs.add(d);
  const anchorCache = new Map<string, Set<string>>();
  return (target: string, anchor: string | null): boolean => {
    if (target === '' || target === '.') return anchor === null;
    if (dirs.has(target)) return anchor === null || anchor === '';
    if (!ctx.allFiles.has(target)) return false;
    if (!anchor || !/\.(md|markdown)$/i.test(target)) return true;
    let set = anchorCache.get(target);
    if (!set) {
      set = anchorsOf(ctx.read(target) ?? '');
      anchorCache.set(target, set);
    }
    return set.has(anchor.toLowerCase()) || set.has(anchor);
  };
}

export const intraRepoLinkFixerMeasure: Measure<IntraRepoLinkFixerParams> = {
  tool: 'intra_repo_link_fixer',
  unit: 'links_fixed',
  defaultGlob: ['**/*.{md,markdown}'],
  paramsSchema: DTA_PARAMS_SCHEMAS.intra_repo_link_fixer,
  async measure(files: Files, _params, ctx): Promise<DtaCounts> {
    const exists = makeResolver(ctx);
    let local_links_total = 0;
    let local_links_broken = 0;
    for (const [rel, text] of files) {
      for (const l of localLinks(rel, text)) {
        local_links_total++;
        if (!exists(l.target, l.anchor)) local_links_broken++;
      }
    }
    return { files_scanned: files.size, local_links_total, local_links_broken };
  },
  check(before, after, claimed) {
    const failures: string[] = [];
    if (after.local_links_broken !== 0) failures.push(`${after.local_links_broken} local links still point to nothing`);
    if (after.local_links_total !== before.local_links_total) failures.push(`local links went from ${before.local_links_total} to ${after.local_links_total}`);
    const fixed = before.local_links_broken - after.local_links_broken;
    if (fixed !== claimed) failures.push(`the run claims ${claimed} links fixed, the files show ${fixed}`);
    return { checks: ['all_local_targets_exist', 'counts_match'], failures };
  },
};

/** Where a path went: an exact move, or a file inside a moved folder. */
function moved(p: string, moves: Record<string, string>): string | null {
  if (Object.hasOwn(moves, p)) return moves[p];
  for (const [from, to] of Object.entries(moves).sort((a, b) => b[0].length - a[0].length)) {
    if (p.startsWith(`${from}/`)) return `${to}${p.slice(from.length)}`;
  }
  return null;
}

function relativeUrl(fromFile: string, target: string, like: string, anchor: string | null): string {
  let rel = path.posix.relative(path.posix.dirname(fromFile), target) || path.posix.basename(target);
  if (like.startsWith('./') && !rel.startsWith('.')) rel = `./${rel}`;
  return encodeURI(rel) + (anchor !== null ? `#${anchor}` : '');
}

export const intraRepoLinkFixer: Adapter<IntraRepoLinkFixerParams> = {
  measure: intraRepoLinkFixerMeasure,
  summary: DTA_SUMMARIES.intra_repo_link_fixer,
  domain: intraRepoLinkFixerMeasure.defaultGlob,
  async prepare(root, params) {
    if (!params.since) return params;
    const out = await git(['diff', '--name-status', '-M', '-z', params.since, 'HEAD', '--'], { cwd: root, what: 'diff' });
    const parts = out.split('\0');
    const moves: Record<string, string> = { ...(params.moves ?? {}) };
    for (let i = 0; i < parts.length; ) {
      const status = parts[i];
      if (!status) break;
      if (status.startsWith('R')) {
        moves[parts[i + 1]] ??= parts[i + 2];
        i += 3;
      } else i += 2;
    }
    return { ...params, moves };
  },
  async propose(files, params, ctx) {
    const moves = params.moves ?? {};
    const reverse: Record<string, string> = {};
    for (const [a, b] of Object.entries(moves)) reverse[b] = a;
    const exists = makeResolver(ctx);
    const changes = new Map<string, string>();
    const notes: string[] = [];
    let units = 0;
    for (const [rel, text] of files) {
      let next = text;
      for (const l of localLinks(rel, text).reverse()) {
        if (exists(l.target, l.anchor)) continue;
        let to = moved(l.target, moves);
        const oldSelf = moved(rel, reverse);
        if (!to && oldSelf) {
          // The linking file itself moved: the link was written relative to its old folder.
          const was = path.posix.normalize(path.posix.join(path.posix.dirname(oldSelf), l.rawPath));
          to = moved(was, moves) ?? was;
        }
        if (!to || !exists(to, l.anchor) || !l.link.rewritable) {
          notes.push(`${rel}: ${l.link.url} points to nothing and no move explains it`);
          continue;
        }
        next = next.slice(0, l.link.start) + relativeUrl(rel, to, l.link.url, l.anchor) + next.slice(l.link.end);
        units++;
      }
      if (next !== text) changes.set(rel, next);
    }
    return { changes, units, notes };
  },
};
