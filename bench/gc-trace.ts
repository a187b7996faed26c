/**
 * Reading `--trace-gc-nvp` output (bench/trace-gc.mjs turns it on in a process): what each isolate
 * allocated and what its collections copied, per MB of output. Shared by bench/control-plane-flood.ts
 * and bench/runner-flood.ts.
 */
/** One collection from `--trace-gc-nvp`: which isolate, minor or major, its pause (ms) and bytes. */
export interface GcLine {
  isolate: string;
  major: boolean;
  pause: number;
  allocated: number;
  survived: number;
  promoted: number;
  /** The isolate's heap (every space, bytes) when the collection began. */
  heapBefore: number;
}

const GC_LINE = /^\[(\d+):(0x[0-9a-f]+)\]\s+[\d.]+ ms: pause=([\d.]+) .* gc=(\w+) .* allocated=(\d+) promoted=(\d+) new_space_survived=(\d+) /;
const HEAP_BEFORE = / total_size_before=(\d+) /;

export function gcLines(logs: string[], pid: number, from: number): GcLine[] {
  const out: GcLine[] = [];
  for (const line of logs.slice(from).join('').split('\n')) {
    const m = GC_LINE.exec(line.trim());
    if (!m || Number(m[1]) !== pid) continue;
    const heapBefore = Number(HEAP_BEFORE.exec(line)?.[1] ?? 0);
    out.push({ isolate: m[2]!, major: m[4] !== 's', pause: Number(m[3]), allocated: Number(m[5]), promoted: Number(m[6]), survived: Number(m[7]), heapBefore });
  }
  return out;
}

/**
 * Per isolate (in order of first appearance), per MB of output:
 * heap allocated, what scavenges copied (survived in the young generation, or promoted to the old
 * one: the garbage collector's work grows with it), collections and their pauses, and the largest
 * heap a collection began with (what fewer mark-compacts cost in memory).
 */
export function gcSummary(lines: GcLine[], isolates: string[], mb: number): string {
  const parts: string[] = [];
  for (const iso of new Set(lines.map((l) => l.isolate))) if (!isolates.includes(iso)) isolates.push(iso);
  const per = (bytes: number) => (bytes / (1024 * 1024) / mb).toFixed(2);
  // The main thread's isolate is the one with the largest heap (Next's and Prisma's code on the
  // control plane; the runner's workers are small): a worker's collection may be logged first.
  const heapOf = (iso: string) => Math.max(0, ...lines.filter((l) => l.isolate === iso).map((l) => l.heapBefore));
  const main = isolates.reduce<string | undefined>((best, iso) => (best === undefined || heapOf(iso) > heapOf(best) ? iso : best), undefined);
  for (const [n, iso] of isolates.entries()) {
    const mine = lines.filter((l) => l.isolate === iso);
    if (!mine.length) continue;
    const sum = (xs: GcLine[], f: (l: GcLine) => number) => xs.reduce((a, l) => a + f(l), 0);
    const minor = mine.filter((l) => !l.major);
    const major = mine.filter((l) => l.major);
    parts.push(
      `isolate ${n + 1}${iso === main ? ' (main)' : ''}: allocated ${per(sum(mine, (l) => l.allocated))} MB/MB, scavenges copied ${per(sum(minor, (l) => l.survived + l.promoted))} MB/MB ` +
        `(promoted ${per(sum(minor, (l) => l.promoted))}); ${minor.length} minor ${(sum(minor, (l) => l.pause) / mb).toFixed(1)} ms/MB, ${major.length} major ${(sum(major, (l) => l.pause) / mb).toFixed(1)} ms/MB; ` +
        `heap up to ${(Math.max(...mine.map((l) => l.heapBefore)) / (1024 * 1024)).toFixed(0)} MB`,
    );
  }
  return parts.length ? `  GC (--trace-gc-nvp): ${parts.join('; ')}` : '';
}
