import fs from 'node:fs';
import path from 'node:path';
import {
  BlueprintFileSchema,
  DETERMINISTIC_LIMITS,
  describeZodError,
  type Blueprint,
  type BlueprintProblem,
} from '../../protocol';
import { CommandSyntaxError, splitCommand } from '../executors/deterministic/argv';
import { compileSchema, createAjv } from '../../common/ajv';

export interface BlueprintCatalogue {
  /** Valid blueprints, by file name order. */
  blueprints: Blueprint[];
  /** Files that were skipped, with the reason. */
  problems: BlueprintProblem[];
}

/**
 * Reads every `*.json` of the folder (not its subfolders). A file that is not a valid blueprint is
 * reported with its name and the reason and skipped; nothing here throws for a bad file. Checks:
 * the shape (name, description, command, parameters_schema), a command that splits into words
 * without shell syntax, a parameters_schema ajv compiles, a project_dir that is a directory, and
 * one file per name.
 */
export async function loadBlueprints(dir: string): Promise<BlueprintCatalogue> {
  const blueprints: Blueprint[] = [];
  const problems: BlueprintProblem[] = [];
  let names: string[];
  try {
    names = (await fs.promises.readdir(dir, { withFileTypes: true }))
      .filter((e) => e.name.endsWith('.json') && !e.name.startsWith('.') && (e.isFile() || e.isSymbolicLink()))
      .map((e) => e.name)
      .sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { blueprints, problems };
    return { blueprints, problems: [{ file: (path.basename(dir) || dir).slice(0, 500), reason: `cannot read the blueprints folder: ${(err as Error).message}`.slice(0, 2000) }] };
  }
  const ajv = createAjv();
  const byName = new Map<string, string>();
  let totalBytes = 0;
  for (const name of names) {
    const file = name.slice(0, 500);
    if (blueprints.length >= DETERMINISTIC_LIMITS.MAX_BLUEPRINTS_PER_RUNNER) {
      problems.push({ file, reason: `more than ${DETERMINISTIC_LIMITS.MAX_BLUEPRINTS_PER_RUNNER} blueprints in one folder; the rest are skipped` });
      continue;
    }
    const r = await loadOne(dir, name, ajv);
    if (!r.ok) {
      problems.push({ file, reason: r.reason.slice(0, 2000) });
      continue;
    }
    const first = byName.get(r.blueprint.name);
    if (first) {
      problems.push({ file, reason: `the name "${r.blueprint.name}" is already taken by ${first}` });
      continue;
    }
    const size = JSON.stringify(r.blueprint).length;
    if (totalBytes + size > DETERMINISTIC_LIMITS.MAX_BLUEPRINTS_TOTAL_BYTES) {
      problems.push({ file, reason: `the folder's blueprints exceed ${DETERMINISTIC_LIMITS.MAX_BLUEPRINTS_TOTAL_BYTES} bytes together; this one is skipped` });
      continue;
    }
    totalBytes += size;
    byName.set(r.blueprint.name, file);
    blueprints.push(r.blueprint);
  }
  return { blueprints, problems: problems.slice(0, DETERMINISTIC_LIMITS.MAX_BLUEPRINTS_PER_RUNNER) };
}

type LoadOne = { ok: true; blueprint: Blueprint } | { ok: false; reason: string };

async function loadOne(dir: string, file: string, ajv: ReturnType<typeof createAjv>): Promise<LoadOne> {
  const full = path.join(dir, file);
  let text: string;
  try {
    const stat = await fs.promises.stat(full);
    if (!stat.isFile()) return { ok: false, reason: 'not a regular file' };
    if (stat.size > DETERMINISTIC_LIMITS.MAX_BLUEPRINT_FILE_BYTES) {
      return { ok: false, reason: `the file is ${stat.size} bytes; a blueprint is at most ${DETERMINISTIC_LIMITS.MAX_BLUEPRINT_FILE_BYTES}` };
    }
    text = await fs.promises.readFile(full, 'utf8');
  } catch (err) {
    return { ok: false, reason: `cannot read it: ${(err as Error).message}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not valid JSON: ${(err as Error).message}` };
  }
  const parsed = BlueprintFileSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: describeZodError(parsed.error) };
  const bp = parsed.data;
  try {
    splitCommand(bp.command);
  } catch (err) {
    if (err instanceof CommandSyntaxError) return { ok: false, reason: `command: ${err.message}` };
    throw err;
  }
  const compiled = compileSchema(ajv, bp.parameters_schema);
  if (!compiled.ok) return { ok: false, reason: `parameters_schema: ${compiled.reason}` };
  const projectDir = path.resolve(dir, bp.project_dir ?? '.');
  try {
    if (!(await fs.promises.stat(projectDir)).isDirectory()) return { ok: false, reason: `project_dir ${projectDir} is not a directory` };
  } catch {
    return { ok: false, reason: `project_dir ${projectDir} does not exist` };
  }
  return {
    ok: true,
    blueprint: {
      name: bp.name,
      description: bp.description,
      command: bp.command,
      parameters_schema: bp.parameters_schema,
      timeout_seconds: bp.timeout_seconds ?? DETERMINISTIC_LIMITS.DEFAULT_TIMEOUT_SECONDS,
      project_dir: projectDir,
    },
  };
}
