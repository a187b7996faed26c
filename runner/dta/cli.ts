import fs from 'node:fs';
import { dtaPassed, DtaOutputSchema, DtaToolSchema, type DtaOutput } from '../../protocol';
import { ADAPTERS } from './adapters';
import { toolJsonSchema } from './contract';
import { runDta } from './engine';
import { loadPolicy } from './policy';
import { HOOK_CONFIG_ENV } from './session-bin';
import { renderTable } from './table';

/**
 * av-dta — deterministic tool adapters from a shell.
 *   av-dta run FILE|-  [--table]   run an invocation; prints the output JSON (or the table)
 *   av-dta list                     the approved adapters
 *   av-dta schema TOOL              the invocation, params and output JSON Schemas
 * Exit 0 only when the run is ok and, for apply, verified; 1 when not; 2 for a usage error.
 */
/** The hook channel's client (plain Node, shared with av-guard). */
const HOOK_CLIENT: string = new URL('../hooks/hook-client.mjs', import.meta.url).href;

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

/** A run can take as long as its timeout_ms allows (the hook channel waits up to 30 min). */
const RUNNER_CALL_TIMEOUT_MS = 30 * 60_000;

type HookClient = { post(url: string, token: string, body: string, timeoutMs: number, socket?: string): Promise<{ status: number; text: string }> };

async function throughRunner(configPath: string, raw: unknown): Promise<{ ok: true; out: DtaOutput } | { ok: false; message: string }> {
  try {
    const config = JSON.parse(fs.readFileSync(configPath, 'utf8')) as { url: string; token: string; socket?: string };
    const client = (await import(HOOK_CLIENT)) as HookClient;
    const body = JSON.stringify({ provider: 'dta', event: 'run', payload: { invocation: raw, cwd: process.cwd() } });
    const res = await client.post(config.url, config.token, body, RUNNER_CALL_TIMEOUT_MS, config.socket);
    if (res.status !== 200) return { ok: false, message: `the runner answered ${res.status}` };
    const stdout = (JSON.parse(res.text) as { stdout?: string }).stdout ?? '';
    const parsed = DtaOutputSchema.safeParse(JSON.parse(stdout));
    if (parsed.success) return { ok: true, out: parsed.data };
    const refusal = JSON.parse(stdout) as { error?: { message?: string } };
    return { ok: false, message: refusal.error?.message ?? 'the runner sent no DTA output' };
  } catch (err) {
    return { ok: false, message: `cannot reach the runner: ${err instanceof Error ? err.message : String(err)}` };
  }
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
  let out: DtaOutput;
  const hookConfig = process.env[HOOK_CONFIG_ENV];
  if (hookConfig) {
    // In a session: the runner runs it on the session's worktree and streams its dta_* events.
    const viaRunner = await throughRunner(hookConfig, raw);
    if (!viaRunner.ok) return usageError(viaRunner.message);
    out = viaRunner.out;
  } else {
    let policy;
    try {
      policy = loadPolicy();
    } catch (err) {
      return usageError(err instanceof Error ? err.message : String(err));
    }
    out = await runDta(raw, { policy });
  }
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
