import fs from 'node:fs';
import { dtaPassed, DtaToolSchema, type DtaOutput } from '../../protocol';
import { ADAPTERS } from './adapters';
import { toolJsonSchema } from './contract';
import { runDta } from './engine';
import { loadPolicy } from './policy';
import { renderTable } from './table';

/**
 * av-dta — deterministic tool adapters from a shell.
 *   av-dta run FILE|-  [--table]   run an invocation; prints the output JSON (or the table)
 *   av-dta list                     the approved adapters
 *   av-dta schema TOOL              the invocation, params and output JSON Schemas
 * Exit 0 only when the run is ok and, for apply, verified; 1 when not; 2 for a usage error.
 */
const USAGE = 'usage: av-dta run FILE|- [--table] | av-dta list | av-dta schema TOOL';

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function usageError(message: string): number {
  print({ ok: false, error: { code: 'BAD_INVOCATION', message } });
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

async function readInput(source: string): Promise<string> {
  if (source !== '-') return fs.readFileSync(source, 'utf8');
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

export function exitCodeFor(out: DtaOutput): number {
  if (!out.ok) return 1;
  return out.phase === 'dry-run' || dtaPassed(out) ? 0 : 1;
}

export async function main(argv: string[]): Promise<number> {
  const table = argv.includes('--table');
  const args = argv.filter((a) => a !== '--table');
  const [command, arg] = args;
  if (command === 'list') {
    print(Object.entries(ADAPTERS).map(([name, a]) => ({ name, summary: a.summary, unit: a.measure.unit, default_glob: a.measure.defaultGlob })));
    return 0;
  }
  if (command === 'schema') {
    const tool = DtaToolSchema.safeParse(arg);
    if (!tool.success) return usageError(`unknown tool ${arg ?? '(none)'}; one of ${DtaToolSchema.options.join(', ')}`);
    print(toolJsonSchema(tool.data));
    return 0;
  }
  if (command !== 'run' || !arg) return usageError(command ? `unknown command ${command}` : 'no command');
  let raw: unknown;
  try {
    raw = JSON.parse(await readInput(arg));
  } catch (err) {
    return usageError(`cannot read an invocation from ${arg}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let policy;
  try {
    policy = loadPolicy();
  } catch (err) {
    return usageError(err instanceof Error ? err.message : String(err));
  }
  const out = await runDta(raw, { policy });
  if (table) process.stdout.write(renderTable(out));
  else print(out);
  return exitCodeFor(out);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      print({ ok: false, error: { code: 'ADAPTER_FAILED', message: err instanceof Error ? err.message : String(err) } });
      process.exitCode = 1;
    },
  );
}
