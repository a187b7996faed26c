import { DTA_PARAMS_SCHEMAS, type DtaCounts } from '../../../../protocol';
import type { Files, Measure } from '../../types';
import { extractLinksMany } from './links';

export interface LinkUpdaterParams {
  from_hosts: string[];
  to_host: string;
  /** Optional bounded HTTP check of rewritten URLs after apply. */
  sample_http?: { size: number; timeout_ms: number };
}

/** What a host prefix must be followed by to be that host (not old.example.com.evil.net). */
const HOST_END = new Set(['', '/', '?', '#']);

export function targetedHost(url: string, fromHosts: string[]): string | null {
  const lower = url.toLowerCase();
  for (const h of fromHosts) {
    const prefix = h.replace(/\/+$/, '');
    if (lower.startsWith(prefix.toLowerCase()) && HOST_END.has(url.charAt(prefix.length))) return prefix;
  }
  return null;
}

export const linkUpdaterMeasure: Measure<LinkUpdaterParams> = {
  tool: 'link_updater',
  unit: 'link_updates',
  defaultGlob: ['**/*.{html,htm,md,markdown,css}'],
  paramsSchema: DTA_PARAMS_SCHEMAS.link_updater,
  async measure(files: Files, params: LinkUpdaterParams): Promise<DtaCounts> {
    let links_total = 0;
    let links_to_update = 0;
    let links_to_target = 0;
    for (const links of (await extractLinksMany(files)).values()) {
      for (const link of links) {
        links_total++;
        if (targetedHost(link.url, params.from_hosts)) links_to_update++;
        else if (targetedHost(link.url, [params.to_host])) links_to_target++;
      }
    }
    return { files_scanned: files.size, links_total, links_to_update, links_to_target };
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
