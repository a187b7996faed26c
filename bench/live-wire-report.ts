/**
 * Reads what bench/live-wire.mjs (preloaded into the control plane by bench:live BENCH_WIRE=DIR)
 * logged: the control plane's running totals of Engine.IO messages, bytes and socket writes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface EngineTotals {
  outMsgs: number;
  outBytes: number;
  /** Characters of the messages sent as text (JSON); the rest went as binary. */
  outText: number;
  inMsgs: number;
  inBytes: number;
  inText: number;
}

export interface WireTotals {
  /** Per engine path: the browsers' `/socket.io/`, the runners' own path. */
  engines: Record<string, EngineTotals>;
  writes: { write: number; writev: number };
}

const NONE: EngineTotals = { outMsgs: 0, outBytes: 0, outText: 0, inMsgs: 0, inBytes: 0, inText: 0 };

/** The control plane's latest totals in `dir`, or null before the first line. */
export function wireTotals(dir: string): WireTotals | null {
  const rows = readdirSync(dir)
    .filter((n) => n.startsWith('wire-'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as WireTotals & { t: number }));
  return rows.sort((a, b) => a.t - b.t).at(-1) ?? null;
}

/**
 * What the control plane sent and received between two samples, as one line: per MB of output
 * (a throughput run), or per second (`unit` 's', an echo run beside floods).
 */
export function wirePerMb(a: WireTotals, b: WireTotals | null, mb: number, unit: 'MB' | 's' = 'MB'): string {
  if (!b) return '';
  const per = (n: number) => (n / mb).toFixed(1);
  const kb = (bytes: number, msgs: number) => (msgs ? (bytes / msgs / 1024).toFixed(1) : '0');
  const json = (chars: number) => `${(chars / 1024 / mb).toFixed(1)} KB/${unit} of it JSON`;
  const parts = Object.entries(b.engines).map(([path, e]) => {
    const z = a.engines[path] ?? NONE;
    const out = e.outMsgs - z.outMsgs;
    const inn = e.inMsgs - z.inMsgs;
    return `${path}: out ${per(out)} msgs (${kb(e.outBytes - z.outBytes, out)} KB each, ${json(e.outText - z.outText)}), in ${per(inn)} msgs (${kb(e.inBytes - z.inBytes, inn)} KB each, ${json(e.inText - z.inText)})`;
  });
  const mbs = unit === 's' ? `, ${((Object.values(b.engines).reduce((n, e) => n + e.outBytes, 0) - Object.values(a.engines).reduce((n, e) => n + e.outBytes, 0)) / 1048576 / mb).toFixed(1)} MB/s out` : '';
  return `  control plane wire per ${unit}: ${parts.join('; ')}; socket writes ${per(b.writes.write - a.writes.write)} write + ${per(b.writes.writev - a.writes.writev)} writev${mbs}`;
}
