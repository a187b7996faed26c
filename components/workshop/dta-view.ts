import type { DtaRunSummary } from '../../protocol';

/**
 * The before/after table of a DTA run, from its output: every baseline count with what the
 * verifier measured after, then the change units proposed and applied. Pure (tested without a browser).
 */
export interface DtaTableRow {
  name: string;
  before: string;
  proposed: string;
  applied: string;
  after: string;
}

export function dtaTable(run: Pick<DtaRunSummary, 'output'>): DtaTableRow[] {
  const out = run.output;
  if (!out) return [];
  const after = out.verifier.measured?.after ?? {};
  const rows: DtaTableRow[] = Object.entries(out.baseline).map(([name, v]) => ({ name, before: String(v), proposed: '', applied: '', after: name in after ? String(after[name]) : '' }));
  for (const [name, v] of Object.entries(out.proposed_changes)) rows.push({ name, before: '', proposed: String(v), applied: String(out.applied_changes[name] ?? 0), after: '' });
  return rows;
}

/** Statuses a run can still leave (its worker stays in the village while in one). */
export const LIVE_DTA_STATUSES: ReadonlySet<string> = new Set(['queued', 'waiting_for_lock', 'proposing', 'waiting_for_approval', 'applying']);

export const STATUS_WORDS: Record<DtaRunSummary['status'], string> = {
  queued: 'queued',
  waiting_for_lock: 'waiting for lock',
  proposing: 'proposing',
  waiting_for_approval: 'waiting for approval',
  applying: 'applying',
  verified: 'verified',
  denied: 'denied',
  failed: 'failed',
};
