'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { RadarCompareResult, RadarHunk, RadarOverlap } from '../../protocol';
import { api, ApiRequestError } from '../ui/api';
import { RADAR_STRINGS as S } from './strings';

/**
 * What the radar knows about one overlap: the shared files and rooms, who got there first, both
 * sides' hunks in the shared files (read from the runner when the popover opens) and a merge
 * preview (`git merge-tree` on the runner) on demand.
 */
export interface RadarPopoverProps {
  overlap: RadarOverlap;
  /** A name for a subject id (session title). */
  nameOf(id: string): string;
  onClose(): void;
}

const time = (ts: number) => new Date(ts).toLocaleTimeString();
const errorText = (e: unknown) => (e instanceof ApiRequestError ? e.message : String(e));

function Hunks({ who, hunks }: { who: string; hunks: RadarHunk[] }) {
  return (
    <div className="radar-side">
      <div className="muted small">{who}</div>
      {hunks.map((h, i) => (
        <pre key={i} className="radar-hunk">
          {`@@ -${h.old_start},${h.old_lines} +${h.new_start},${h.new_lines} @@\n${h.lines.join('\n')}${h.more ? `\n… ${h.more} more` : ''}`}
        </pre>
      ))}
    </div>
  );
}

export default function RadarPopover({ overlap: o, nameOf, onClose }: RadarPopoverProps) {
  const sessions = o.a.kind === 'session' && o.b.kind === 'session';
  const body = { session_a: o.a.id, session_b: o.b.id };
  const hunks = useQuery({
    queryKey: ['radar-hunks', o.id, o.files.join('\0')],
    queryFn: () => api<RadarCompareResult>('/api/radar/compare', { body: { ...body, merge: false } }),
    enabled: sessions && o.files.length > 0,
  });
  const merge = useMutation({ mutationFn: () => api<RadarCompareResult>('/api/radar/compare', { body: { ...body, merge: true } }) });
  const preview = merge.data?.merge;

  return (
    <section className="radar-popover" role="dialog" aria-label={`${S.popoverTitle}: ${nameOf(o.a.id)} and ${nameOf(o.b.id)}`} data-overlap-id={o.id}>
      <header className="row">
        <h2 className="panel-title">{S.popoverTitle}</h2>
        <button type="button" className="btn" onClick={onClose} aria-label={S.close}>
          ×
        </button>
      </header>
      <p>
        <strong>{nameOf(o.a.id)}</strong> ↔ <strong>{nameOf(o.b.id)}</strong>
      </p>
      {o.files.length > 0 && (
        <>
          <h3 className="panel-title">{S.sharedFiles}</h3>
          <ul className="radar-files">
            {o.files.map((f) => (
              <li key={f}>
                <code>{f}</code>
              </li>
            ))}
          </ul>
        </>
      )}
      {o.dirs.length > 0 && (
        <>
          <h3 className="panel-title">{S.sharedDirs}</h3>
          <ul className="radar-files">
            {o.dirs.map((d) => (
              <li key={d}>
                <code>{d || '/'}/</code>
              </li>
            ))}
          </ul>
        </>
      )}
      <h3 className="panel-title">{S.timeline}</h3>
      <ol className="radar-timeline">
        {o.timeline.map((t, i) => (
          <li key={i}>
            {time(t.ts)} · {nameOf(t.subject)} · <code>{t.path}</code>
            {i === 0 && <span className="radar-first"> ({S.first})</span>}
          </li>
        ))}
      </ol>
      {sessions && o.files.length > 0 && (
        <>
          <h3 className="panel-title">{S.hunks}</h3>
          {hunks.isPending && <p className="muted small">{S.loadingHunks}</p>}
          {hunks.isError && <p className="error-line">{errorText(hunks.error)}</p>}
          {hunks.data?.files.map((f) => (
            <div key={f.path} className="radar-file" data-overlapping={f.overlapping}>
              <code>{f.path}</code>
              {f.a.length + f.b.length === 0 ? (
                <p className="muted small">{S.noHunks}</p>
              ) : (
                <div className="radar-sides">
                  <Hunks who={nameOf(o.a.id)} hunks={f.a} />
                  <Hunks who={nameOf(o.b.id)} hunks={f.b} />
                </div>
              )}
            </div>
          ))}
        </>
      )}
      {sessions ? (
        <div className="radar-merge">
          <button type="button" className="btn btn-primary" disabled={merge.isPending} onClick={() => merge.mutate()}>
            {S.mergePreview}
          </button>
          {merge.isPending && <p className="muted small">{S.merging}</p>}
          {merge.isError && <p className="error-line">{errorText(merge.error)}</p>}
          {preview && (
            <div role="status" className="radar-merge-result" data-clean={preview.clean}>
              {preview.clean ? (
                <p>{S.mergeClean}</p>
              ) : (
                <>
                  <p>{S.mergeConflicts(preview.conflicts.length)}</p>
                  <ul>
                    {preview.conflicts.map((c) => (
                      <li key={c.path}>
                        <code>{c.path}</code> ({c.kind})
                        {c.regions.map((r, i) => (
                          <pre key={i} className="radar-hunk">{`line ${r.line}\n<<<<<<< ${nameOf(o.a.id)}\n${r.a.join('\n')}\n=======\n${r.b.join('\n')}\n>>>>>>> ${nameOf(o.b.id)}`}</pre>
                        ))}
                      </li>
                    ))}
                  </ul>
                </>
              )}
            </div>
          )}
        </div>
      ) : (
        <p className="muted small">{S.dtaNoPreview}</p>
      )}
    </section>
  );
}
