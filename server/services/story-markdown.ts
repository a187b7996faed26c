import type { SessionStory } from '../../protocol';

/** A session story as Markdown for a pull request's description: pure, so the export is tested on data. */

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${sec} s` : `${sec} s`;
}

const room = (r: string) => (r === '' ? '/' : `${r}/`);
const count = (n: number | null) => (n === null ? 'binary' : String(n));
/** A fence longer than any backtick run inside, so a diff that contains ``` stays one block. */
function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(longest + 1);
}

export function storyMarkdown(story: SessionStory, link?: string): string {
  const s = story.session;
  const out: string[] = [];
  out.push(`## Session story: ${s.title}`, '');
  out.push(`- **Repository:** ${story.repo.name}`);
  out.push(`- **Agent:** ${s.provider}, started by ${s.created_by || 'unknown'}`);
  out.push(`- **Outcome:** ${s.state} — ${s.reason}`);
  out.push(`- **Duration:** ${duration(story.duration_ms)} (${s.created_at}${story.ended_at ? ` → ${story.ended_at}` : ''})`);
  out.push(`- **Agent-minutes:** ${story.agent_minutes}`);
  out.push(`- **Rooms visited:** ${story.rooms.map(room).join(' → ')}`);
  if (link) out.push(`- **Story:** ${link}`);
  out.push('', `### Files changed (${story.files.length})`, '');
  if (story.files.length === 0) out.push('No files changed.');
  for (const f of story.files) out.push(`- \`${f.path}\` +${count(f.added)} −${count(f.removed)}`);
  if (story.patch) {
    const f = fence(story.patch);
    out.push('', '<details><summary>Diff</summary>', '', `${f}diff`, story.patch.trimEnd(), f, '', '</details>');
  }
  out.push('', '### Tests', '');
  if (story.tests.length === 0) out.push('No test runs.');
  for (const t of story.tests) out.push(`- \`${t.command}\`: ${t.passed} passed, ${t.failed} failed${t.exit_code === null ? '' : ` (exit ${t.exit_code})`}`);
  out.push('', '### Approvals', '');
  if (story.approvals.length === 0) out.push('No approvals asked.');
  for (const a of story.approvals) {
    const who = a.decided_by ? ` by ${a.decided_by}` : '';
    out.push(`- ${a.category}: ${a.summary} — **${a.state}**${who}${a.note ? ` (“${a.note}”)` : ''}`);
  }
  out.push('', '### Secrets masked', '');
  const masked = story.redactions.reduce((n, r) => n + r.count, 0);
  if (masked === 0) out.push('None.');
  for (const r of story.redactions) out.push(`- ${r.secret_name ?? r.rule} × ${r.count} (${r.source})`);
  return `${out.join('\n')}\n`;
}
