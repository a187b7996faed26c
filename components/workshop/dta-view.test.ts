import { describe, expect, it } from 'vitest';
import type { DtaOutput } from '../../protocol';
import { dtaTable } from './dta-view';

const output: DtaOutput = {
  tool: 'link_updater',
  ok: true,
  phase: 'verify',
  run_id: 'dta_abcdefgh',
  baseline: { files_scanned: 4, links_to_update: 15 },
  proposed_changes: { files: 3, link_updates: 15 },
  applied_changes: { files: 3, link_updates: 15 },
  files: [],
  patch_sha256: null,
  artifacts: [],
  verifier: { passed: true, checks: ['counts_match'], failures: [], sample_size: 0, measured: { before: { files_scanned: 4, links_to_update: 15 }, after: { files_scanned: 4, links_to_update: 0 } } },
  notes: [],
};

describe('the DTA before/after table', () => {
  it('shows each baseline count with what the verifier measured after, then the units proposed and applied', () => {
    expect(dtaTable({ output })).toEqual([
      { name: 'files_scanned', before: '4', proposed: '', applied: '', after: '4' },
      { name: 'links_to_update', before: '15', proposed: '', applied: '', after: '0' },
      { name: 'files', before: '', proposed: '3', applied: '3', after: '' },
      { name: 'link_updates', before: '', proposed: '15', applied: '15', after: '' },
    ]);
    expect(dtaTable({ output: null })).toEqual([]);
  });
});
