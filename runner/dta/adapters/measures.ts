import type { DtaTool } from '../../../protocol';
import type { Measure } from '../types';

type AnyMeasure = Measure<Record<string, unknown>>;

/**
 * One adapter's measuring half, loaded on its own. The verifier is a fresh process per run: loading
 * every adapter (ts-morph and the TypeScript compiler for rename_refactor) cost it about 1.4 s of
 * CPU before it measured anything; now it loads only the parsers its tool needs.
 */
const LOADERS: Record<DtaTool, () => Promise<unknown>> = {
  link_updater: async () => (await import('./link-updater/measure')).linkUpdaterMeasure,
  json_schema_migrator: async () => (await import('./json-schema-migrator')).jsonSchemaMigratorMeasure,
  rename_refactor: async () => (await import('./rename-refactor')).renameRefactorMeasure,
  intra_repo_link_fixer: async () => (await import('./intra-repo-link-fixer')).intraRepoLinkFixerMeasure,
};

export async function loadMeasure(tool: DtaTool): Promise<AnyMeasure> {
  return (await LOADERS[tool]()) as AnyMeasure;
}
