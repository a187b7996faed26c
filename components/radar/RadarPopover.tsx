'use client';
import { useQuery } from '@tanstack/react-query';
import type { RadarCompareResult, RadarHunk, RadarOverlap } from '../../protocol';
import { api } from '../ui/api';
import { compareBody, errorText } from './compare-body';
import MergePreview from './MergePreview';
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
  // A DTA run has no session title: it is named by its id unless the caller knows better.
  const label = (side: 'a' | 'b') => {
    const s = o[side];
    const name = nameOf(s.id);
    return s.kind === 'dta' && name === s.id ? S.dtaName(s.id) : name;
  };
  const hunks = useQuery({
    queryKey: ['radar-hunks', o.id, o.files.join('\0')],
    queryFn: () => api<RadarCompareResult>('/api/radar/compare', { body: compareBody(o, false) }),
    enabled: o.files.length > 0,
  });

  return (
    <section className="radar-popover" role="dialog" aria-label={`${S.popoverTitle}: ${label('a')} and ${label('b')}`} data-overlap-id={o.id}>
      <header className="row">
        <h2 className="panel-title">{S.popoverTitle}</h2>
        <button type="button" className="btn" onClick={onClose} aria-label={S.close}>
          ×
        </button>
      </header>
      <p>
        <strong>{label('a')}</strong> ↔ <strong>{label('b')}</strong>
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
            {time(t.ts)} · {label(t.subject === o.a.id ? 'a' : 'b')} · <code>{t.path}</code>
            {i === 0 && <span className="radar-first"> ({S.first})</span>}
          </li>
        ))}
      </ol>
      {o.files.length > 0 && (
        <>
          <h3 className="panel-title">{S.hunks}</h3>
          {hunks.isPending && <p className="muted small">{S.loadingHunks}</p>}
          {hunks.isError && (
            <p className="error-line">
              {S.hunksFailed} {errorText(hunks.error)}
            </p>
          )}
          {hunks.data?.files.map((f) => (
            <div key={f.path} className="radar-file" data-overlapping={f.overlapping}>
              <code>{f.path}</code>
              {f.a.length + f.b.length === 0 ? (
                <p className="muted small">{S.noHunks}</p>
              ) : (
                <div className="radar-sides">
                  <Hunks who={label('a')} hunks={f.a} />
                  <Hunks who={label('b')} hunks={f.b} />
                </div>
              )}
            </div>
          ))}
        </>
      )}
      <MergePreview overlap={o} label={label} />
    </section>
  );
}
