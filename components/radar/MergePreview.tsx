'use client';
import { useMutation } from '@tanstack/react-query';
import type { RadarCompareResult, RadarOverlap } from '../../protocol';
import { api } from '../ui/api';
import { compareBody, errorText } from './compare-body';
import { RADAR_STRINGS as S } from './strings';

/**
 * The "Merge preview" of one overlap: `git merge-tree` of both sides on the runner that holds the
 * work (a live session's worktree, a DTA run's proposal, or a session on another runner sent
 * over as a patch). Progress while it runs, then clean or the conflicting files and regions.
 */
export default function MergePreview({ overlap: o, label }: { overlap: RadarOverlap; label(side: 'a' | 'b'): string }) {
  const merge = useMutation({ mutationFn: () => api<RadarCompareResult>('/api/radar/compare', { body: compareBody(o, true) }) });
  const preview = merge.data?.merge;
  const dta = [o.a, o.b].some((s) => s.kind === 'dta');
  return (
    <div className="radar-merge" aria-busy={merge.isPending}>
      <button type="button" className="btn btn-primary" disabled={merge.isPending} onClick={() => merge.mutate()}>
        {S.mergePreview}
      </button>
      {dta && <p className="muted small">{`${label(o.a.kind === 'dta' ? 'a' : 'b')}: ${S.dtaSide}`}</p>}
      {merge.isPending && (
        <p className="muted small" role="progressbar" aria-label={S.merging}>
          {S.merging}
        </p>
      )}
      {merge.isError && (
        <p className="error-line" role="alert">
          {S.previewFailed} {errorText(merge.error)}
        </p>
      )}
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
                      <pre key={i} className="radar-hunk">{`${S.regionAt(r.line)}\n<<<<<<< ${label('a')}\n${r.a.join('\n')}\n=======\n${r.b.join('\n')}\n>>>>>>> ${label('b')}`}</pre>
                    ))}
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
    </div>
  );
}
