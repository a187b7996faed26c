import type { DtaOutput } from '../../protocol';

/** The compact before/after table and the verifier's checks (deterministic-tool-adapters.md "Observability"). */
export function renderTable(out: DtaOutput): string {
  const after = out.verifier.measured?.after ?? {};
  const rows: string[][] = [['', 'before', 'proposed', 'applied', 'after']];
  for (const [k, v] of Object.entries(out.baseline)) rows.push([k, String(v), '', '', k in after ? String(after[k]) : '']);
  for (const [k, v] of Object.entries(out.proposed_changes)) rows.push([k, '', String(v), String(out.applied_changes[k] ?? 0), '']);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = [`${out.tool} ${out.phase} ${out.run_id}: ${out.ok ? 'ok' : `failed (${out.error?.code ?? 'error'}: ${out.error?.message ?? ''})`}`];
  for (const r of rows) lines.push(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd());
  lines.push(`verifier: ${out.verifier.passed ? 'passed' : 'FAILED'}${out.verifier.sample_size ? ` (HTTP sample ${out.verifier.sample_size})` : ''}`);
  // Failures name their own check in words; the list says which checks ran.
  for (const c of out.verifier.checks) lines.push(`  ${out.verifier.passed ? '✓' : '·'} ${c}`);
  for (const f of out.verifier.failures) lines.push(`  ✗ ${f}`);
  for (const n of out.notes.slice(0, 20)) lines.push(`note: ${n}`);
  return `${lines.join('\n')}\n`;
}
