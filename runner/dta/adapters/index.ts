import type { DtaTool } from '../../../protocol';
import type { Adapter, Measure } from '../types';
import { intraRepoLinkFixer } from './intra-repo-link-fixer';
import { jsonSchemaMigrator } from './json-schema-migrator';
import { linkUpdater } from './link-updater/adapter';
import { renameRefactor } from './rename-refactor';

/** The approved adapters (deterministic-tool-adapters.md "Approved DTAs only"). */
export const ADAPTERS: Record<DtaTool, Adapter<never>> = {
  link_updater: linkUpdater as Adapter<never>,
  json_schema_migrator: jsonSchemaMigrator as Adapter<never>,
  rename_refactor: renameRefactor as Adapter<never>,
  intra_repo_link_fixer: intraRepoLinkFixer as Adapter<never>,
};

export function measureOf(tool: DtaTool): Measure<Record<string, unknown>> {
  return ADAPTERS[tool].measure as unknown as Measure<Record<string, unknown>>;
}

export function adapterOf(tool: DtaTool): Adapter<Record<string, unknown>> {
  return ADAPTERS[tool] as unknown as Adapter<Record<string, unknown>>;
}
