'use client';
import type { ApprovalContext, BlastRadius as Radius } from '../../protocol';

/** Files listed on the card; the totals still count every file. */
const SHOWN_FILES = 12;

/** What the action would touch, as the runner measured it (issue 19 item 3). */
export default function BlastRadius({ context }: { context: ApprovalContext }) {
  const r = context.blast_radius as Radius | undefined;
  if (!r && !context.range) return null;
  return (
    <section className="blast-radius" aria-label="Blast radius">
      <h3 className="small">Blast radius{context.range ? <span className="muted"> · {context.range}</span> : null}</h3>
      {r?.kind === 'files' && (
        <>
          <p className="small">
            {r.total_files} file{r.total_files === 1 ? '' : 's'}, <span className="added">+{r.lines_added}</span> <span className="deleted">−{r.lines_deleted}</span> lines
          </p>
          <ul className="blast-list">
            {r.files.slice(0, SHOWN_FILES).map((f) => (
              <li key={f.path}>
                <code>{f.path}</code> <span className="added">+{f.added}</span> <span className="deleted">−{f.deleted}</span>
              </li>
            ))}
            {r.total_files > SHOWN_FILES && <li className="muted">and {r.total_files - SHOWN_FILES} more</li>}
          </ul>
        </>
      )}
      {r?.kind === 'packages' && (
        <ul className="blast-list">
          {r.packages.map((p) => (
            <li key={p.name}>
              <code>{p.name}</code>
              {p.version ? `@${p.version}` : ''} — {p.license ?? <span className="muted">licence not known offline</span>}
            </li>
          ))}
        </ul>
      )}
      {r?.kind === 'hosts' && (
        <p className="small">{r.hosts.length ? r.hosts.map((h) => <code key={h}>{h} </code>) : <span className="muted">no host named on the command line</span>}</p>
      )}
    </section>
  );
}
