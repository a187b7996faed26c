import type { DtaCounts } from '../../../../protocol/dta';
import { DTA_PARAMS_SCHEMAS } from '../../../../protocol/dta-params';
import type { Files, Measure, MeasureContext } from '../../types';
import { extractLinksMany, type FoundLink } from './links';

export interface LinkUpdaterParams {
  from_hosts: string[];
  to_host: string;
  /** Optional bounded HTTP check of rewritten URLs after apply. */
  sample_http?: { size: number; timeout_ms: number };
}

/** What a host prefix must be followed by to be that host (not old.example.com.evil.net). */
const HOST_END = new Set(['', '/', '?', '#']);

/**
 * Which of these host prefixes a URL starts with (compared lowercased, followed by the end, `/`,
 * `?` or `#`), as a function made once per run: a measure asks it for every link of every file,
 * and the prefixes' trimming and lowercasing were redone for each.
 */
export function hostMatcher(hosts: readonly string[]): (url: string) => string | null {
  const prefixes = hosts.map((h) => {
    const prefix = h.replace(/\/+$/, '');
    return { prefix, lower: prefix.toLowerCase() };
  });
  return (url) => {
    const lower = url.toLowerCase();
    for (const p of prefixes) if (lower.startsWith(p.lower) && HOST_END.has(url.charAt(p.prefix.length))) return p.prefix;
    return null;
  };
}

export function targetedHost(url: string, fromHosts: readonly string[]): string | null {
  return hostMatcher(fromHosts)(url);
}

/**
 * Characters that let a file spell a URL other than as its bytes: character references (`&…;`,
 * decoded by parse5 and micromark), backslash escapes (Markdown, CSS), and the two non-ASCII
 * letters whose lowercase is ASCII (KELVIN SIGN → k, I WITH DOT ABOVE → i̇), which targetedHost's
 * toLowerCase would turn into a host's letters.
 */
const SPELLS_OTHERWISE = /[&\\\u212a\u0130]/;
/** A host with letters outside ASCII (an IDN written in Unicode) is always parsed for. */
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * The prefilter: can this file hold a link to one of the hosts at all? A link is targeted when its
 * decoded URL, lowercased, starts with a host prefix; a URL is decoded only from the escapes above.
 * So a file whose lowercased text has no host prefix and no such escape provably has no link to
 * update, and its parse (the whole cost of a run) is skipped. Anything unsure is parsed. Made once
 * per run: the prefixes, ASCII, are matched ASCII-case-insensitively (a regex without the u flag
 * folds ASCII letters only with each other), which is the lowercased text's `includes` once the
 * two letters above are ruled out, without a lowercased copy of every file.
 */
export function linkPrefilter(hosts: readonly string[]): (text: string) => boolean {
  const prefixes = hosts.map((h) => h.replace(/\/+$/, ''));
  if (prefixes.some((p) => NON_ASCII.test(p))) return () => true;
  const anyHost = prefixes.length ? new RegExp(prefixes.map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'), 'i') : null;
  return (text) => SPELLS_OTHERWISE.test(text) || (anyHost !== null && anyHost.test(text));
}

export function mayLinkTo(text: string, hosts: readonly string[]): boolean {
  return linkPrefilter(hosts)(text);
}

/**
 * A file's counts by its links list (the parse cache's, one per text: links.ts) and the hosts they
 * were counted for: a verifier measures the same HEAD texts three times (prepare, the dry-run's
 * before, the apply's before) and the same new texts twice, each time URL by URL before.
 */
const countsOf = new WeakMap<readonly FoundLink[], { hosts: string; update: number; target: number }>();

export const linkUpdaterMeasure: Measure<LinkUpdaterParams> = {
  tool: 'link_updater',
  unit: 'link_updates',
  defaultGlob: ['**/*.{html,htm,md,markdown,css}'],
  paramsSchema: DTA_PARAMS_SCHEMAS.link_updater,
  /**
   * Links are counted in the files parsed: those the prefilter (or the verifier's own selection,
   * ctx.parse) says can hold a link to the old hosts. A file left out has none by its bytes, and its
   * other links cannot change, because the run never changes it.
   */
  async measure(files: Files, params: LinkUpdaterParams, ctx: MeasureContext): Promise<DtaCounts> {
    let links_total = 0;
    let links_to_update = 0;
    let links_to_target = 0;
    const mayLink = linkPrefilter(params.from_hosts);
    const select = ctx.parse ?? ((_rel: string, text: string) => mayLink(text));
    const parsed = [...files].filter(([rel, text]) => select(rel, text));
    const toUpdate = hostMatcher(params.from_hosts);
    const toTarget = hostMatcher([params.to_host]);
    const hosts = JSON.stringify([params.from_hosts, params.to_host]);
    for (const links of (await extractLinksMany(parsed)).values()) {
      let c = countsOf.get(links);
      if (c?.hosts !== hosts) {
        c = { hosts, update: 0, target: 0 };
        for (const link of links) {
          if (toUpdate(link.url)) c.update++;
          else if (toTarget(link.url)) c.target++;
        }
        countsOf.set(links, c);
      }
      links_total += links.length;
      links_to_update += c.update;
      links_to_target += c.target;
    }
    return { files_scanned: files.size, files_parsed: parsed.length, links_total, links_to_update, links_to_target };
  },
  check(before, after, claimed) {
    const failures: string[] = [];
    if (after.links_to_update !== 0) failures.push(`links_to_update is ${after.links_to_update} after, not 0`);
    if (after.links_total !== before.links_total) failures.push(`links_total changed from ${before.links_total} to ${after.links_total}: links were lost or invented`);
    const moved = before.links_to_update - after.links_to_update;
    if (moved !== claimed) failures.push(`the run claims ${claimed} link updates, the files show ${moved}`);
    if (after.links_to_target - before.links_to_target !== moved) failures.push(`links to the new host grew by ${after.links_to_target - before.links_to_target}, expected ${moved}`);
    return { checks: ['links_to_update_zero', 'links_total_unchanged', 'counts_match'], failures };
  },
};
