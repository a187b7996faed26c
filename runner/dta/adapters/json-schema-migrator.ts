import type { ValidateFunction } from 'ajv';
import { createAjv } from '../../../common/ajv';
import type { DtaCounts } from '../../../protocol/dta';
import { DTA_PARAMS_SCHEMAS, DTA_SUMMARIES } from '../../../protocol/dta-params';
import type { Adapter, Files, Measure } from '../types';

/**
 * json_schema_migrator: every matching JSON file validated against a given schema. Fixable
 * classes — keys renamed by a mapping, missing defaults, type coercions (ajv's own coercion
 * rules) — are fixed; whatever stays invalid is reported and left alone.
 */
export interface JsonSchemaMigratorParams {
  schema: Record<string, unknown>;
  /** old key → new key, at every object level. */
  renames?: Record<string, string>;
  fill_defaults?: boolean;
  coerce_types?: boolean;
}

/** Validators by schema text: the checker fills nothing, so a missing default counts as invalid. */
const checkers = new Map<string, ValidateFunction>();
function checker(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = checkers.get(key);
  if (!v) {
    v = createAjv({ useDefaults: false }).compile(schema);
    checkers.set(key, v);
  }
  return v;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export const jsonSchemaMigratorMeasure: Measure<JsonSchemaMigratorParams> = {
  tool: 'json_schema_migrator',
  unit: 'files_fixed',
  defaultGlob: ['**/*.json'],
  paramsSchema: DTA_PARAMS_SCHEMAS.json_schema_migrator,
  async measure(files: Files, params): Promise<DtaCounts> {
    const validate = checker(params.schema);
    let files_invalid = 0;
    let files_unparseable = 0;
    let errors_total = 0;
    for (const text of files.values()) {
      const parsed = parseJson(text);
      if (!parsed.ok) {
        files_unparseable++;
        continue;
      }
      if (!validate(parsed.value)) {
        files_invalid++;
        errors_total += validate.errors?.length ?? 1;
      }
    }
    return { files_scanned: files.size, files_invalid, files_unparseable, errors_total };
  },
  check(before, after, claimed) {
    const failures: string[] = [];
    const fixed = before.files_invalid - after.files_invalid;
    if (fixed !== claimed) failures.push(`the run claims ${claimed} files fixed, re-validation shows ${fixed}`);
    if (after.files_unparseable !== before.files_unparseable) failures.push(`unparseable files went from ${before.files_unparseable} to ${after.files_unparseable}`);
    if (after.files_scanned !== before.files_scanned) failures.push(`files scanned went from ${before.files_scanned} to ${after.files_scanned}`);
    return { checks: ['revalidated', 'counts_match'], failures };
  },
};

function renameKeys(value: unknown, renames: Record<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => renameKeys(v, renames));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const to = Object.hasOwn(renames, k) && !Object.hasOwn(value, renames[k]) ? renames[k] : k;
    out[to] = renameKeys(v, renames);
  }
  return out;
}

/** The file's own indentation and final newline survive the rewrite (a small, reviewable diff). */
function serialize(value: unknown, original: string): string {
  const indent = /^[ \t]+(?=")/m.exec(original)?.[0] ?? '  ';
  return JSON.stringify(value, null, indent) + (original.endsWith('\n') ? '\n' : '');
}

export const jsonSchemaMigrator: Adapter<JsonSchemaMigratorParams> = {
  measure: jsonSchemaMigratorMeasure,
  summary: DTA_SUMMARIES.json_schema_migrator,
  domain: ['**/*.json'],
  async propose(files, params) {
    const validate = checker(params.schema);
    const fixer = createAjv({ useDefaults: params.fill_defaults !== false, coerceTypes: params.coerce_types !== false }).compile(params.schema);
    const changes = new Map<string, string>();
    const notes: string[] = [];
    for (const [rel, text] of files) {
      const parsed = parseJson(text);
      if (!parsed.ok) {
        notes.push(`${rel}: not JSON; left alone`);
        continue;
      }
      if (validate(parsed.value)) continue;
      // ajv coerces in place only inside objects/arrays; a bare scalar root is left as it is.
      const candidate = renameKeys(structuredClone(parsed.value), params.renames ?? {});
      fixer(candidate);
      if (!validate(candidate)) {
        const why = (validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ');
        notes.push(`${rel}: not fixable automatically (${why})`);
        continue;
      }
      changes.set(rel, serialize(candidate, text));
    }
    return { changes, units: changes.size, notes };
  },
};
