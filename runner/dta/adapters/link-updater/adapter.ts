import { DTA_SUMMARIES } from '../../../../protocol';
import type { Adapter } from '../../types';
import { extractLinks } from './links';
import { hostMatcher, linkPrefilter, linkUpdaterMeasure, type LinkUpdaterParams } from './measure';

/** Rewrites links to the old hosts by their parser offsets, back to front so offsets stay valid. */
export const linkUpdater: Adapter<LinkUpdaterParams> = {
  measure: linkUpdaterMeasure,
  summary: DTA_SUMMARIES.link_updater,
  domain: linkUpdaterMeasure.defaultGlob,
  async propose(files, params) {
    const changes = new Map<string, string>();
    const notes: string[] = [];
    let units = 0;
    const to = params.to_host.replace(/\/+$/, '');
    const targeted = hostMatcher(params.from_hosts);
    const mayLink = linkPrefilter(params.from_hosts);
    for (const [rel, text] of files) {
      if (!mayLink(text)) continue; // no link to the old hosts, by its bytes
      let next = text;
      const links = extractLinks(rel, text).filter((l) => targeted(l.url));
      for (const link of [...links].reverse()) {
        if (!link.rewritable) {
          notes.push(`${rel}@${link.start}: ${link.url} is written with escapes; left as it is`);
          continue;
        }
        const host = targeted(link.url)!;
        next = next.slice(0, link.start) + to + link.url.slice(host.length) + next.slice(link.end);
        units++;
      }
      if (next !== text) changes.set(rel, next);
    }
    return { changes, units, notes };
  },
};
