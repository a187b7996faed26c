/**
 * What the mirror thread allocates per MB of output, and where (issue 17): the mirror thread fed as
 * the live path feeds it (bench:mirror's "live" rows: one 64 KB event per macrotask at
 * BENCH_FEED_MBPS, seek points inside, reattach snapshots by screens.ts's rule), its isolate
 * sampled by V8's heap profiler with the objects later collected included (what the garbage
 * collector had to clean up), through the inspector's NodeWorker domain. Prints MB allocated per
 * MB of output and the allocating functions (self bytes, and bytes under each of a few callers),
 * and writes the .heapprofile to BENCH_HEAP_OUT (open in Chrome DevTools, Memory tab).
 * Also prints the thread's CPU per MB (schedstat of the av-mirror thread). Asserts nothing.
 * Usage: node --import tsx bench/mirror-heap.ts   (BENCH_MB 16, BENCH_WORKLOAD: a name's part, BENCH_ROUNDS 2, BENCH_FEED_MBPS 6, BENCH_BYTES)
 */
import { Session } from 'node:inspector/promises';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { DEFAULT_TERMINAL_SCROLLBACK } from '../protocol';
import { TerminalMirror } from '../server/services/terminal/mirror';
import { stopMirrorThread } from '../server/services/terminal/mirror-thread';
import { COLS, eventsOf, mirror, ROWS, WORKLOADS } from './mirror-workloads';

const MB = Number(process.env.BENCH_MB ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const FEED_MBPS = Number(process.env.BENCH_FEED_MBPS ?? 6);
const OUT = process.env.BENCH_HEAP_OUT;
/** BENCH_CPU=1: also the thread's CPU profile, self time per function (indicative only: under load V8 charges waiting for a core to whatever runs next). */
const CPU = process.env.BENCH_CPU === '1';
/** BENCH_HEAP=0: no allocation sampling (for CPU figures, or `node --trace-gc-nvp` runs). */
const HEAP = process.env.BENCH_HEAP !== '0';
/** BENCH_BYTES=1: chunks are handed to the mirror as UTF-8 bytes too (the runner's bytes; encoded by the bench outside the clock's thread of interest). */
const BYTES = process.env.BENCH_BYTES === '1';
const SAMPLING_INTERVAL = 16 * 1024;
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** The mirror thread's isolate, reached from this one through the inspector (NodeWorker domain). */
class WorkerInspector {
  private next = 1;
  private readonly waiting = new Map<number, (r: { result?: unknown; error?: unknown }) => void>();
  private sessionId: string | null = null;

  constructor(private readonly session: Session) {
    session.on('NodeWorker.receivedMessageFromWorker', (m: { params: { message: string } }) => {
      const msg = JSON.parse(m.params.message) as { id?: number; result?: unknown; error?: unknown };
      if (msg.id !== undefined) this.waiting.get(msg.id)?.(msg);
    });
  }

  async attach(title: string): Promise<void> {
    const attached = new Promise<string>((resolve) =>
      this.session.on('NodeWorker.attachedToWorker', (m: { params: { sessionId: string; workerInfo: { url: string; title: string } } }) => {
        if (m.params.workerInfo.url.includes(title) || m.params.workerInfo.title.includes(title)) resolve(m.params.sessionId);
      }),
    );
    await this.session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    this.sessionId = await attached;
  }

  post<T>(method: string, params: object = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, (r) => {
        this.waiting.delete(id);
        if (r.error) reject(new Error(JSON.stringify(r.error)));
        else resolve(r.result as T);
      });
      void this.session.post('NodeWorker.sendMessageToWorker', { sessionId: this.sessionId, message: JSON.stringify({ id, method, params }) });
    });
  }
}

/** The av-mirror thread's CPU so far (ns), from schedstat. */
function mirrorThreadNs(): number {
  for (const tid of readdirSync('/proc/self/task')) {
    const comm = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
    if (comm === 'av-mirror') return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
  }
  return 0;
}

const where = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;

/** Self bytes by function, and bytes by the nearest project (non-xterm) caller, biggest first. */
function summarise(root: ProfileNode, mb: number): string[] {
  const self = new Map<string, number>();
  const byCaller = new Map<string, number>();
  let total = 0;
  const walk = (n: ProfileNode, caller: string) => {
    const here = where(n);
    const mine = /services\/terminal|protocol|zod|node:internal|common\//.test(n.callFrame.url) ? here : caller;
    self.set(here, (self.get(here) ?? 0) + n.selfSize);
    byCaller.set(mine, (byCaller.get(mine) ?? 0) + n.selfSize);
    total += n.selfSize;
    for (const c of n.children) walk(c, mine);
  };
  walk(root, '(root)');
  const per = (b: number) => `${(b / 1048576 / mb).toFixed(2).padStart(6)} MB/MB`;
  const out = [`  allocated ${per(total)} (sampled)`, '  self:'];
  for (const [k, b] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 18)) out.push(`    ${per(b)}  ${k}`);
  out.push('  under the nearest caller of ours (or node/zod):');
  for (const [k, b] of [...byCaller].sort((a, b) => b[1] - a[1]).slice(0, 12)) out.push(`    ${per(b)}  ${k}`);
  return out;
}

interface CpuProfile {
  nodes: { id: number; callFrame: ProfileNode['callFrame']; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

function selfTimes(p: CpuProfile, mb: number): string[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const k = where(byId.get(p.samples[i]!)! as unknown as ProfileNode);
    self.set(k, (self.get(k) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const out = ['  CPU profile, self time:'];
  for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20)) out.push(`    ${(us / 1000 / mb).toFixed(2).padStart(6)} ms/MB  ${k}`);
  return out;
}

async function main() {
  console.log(`mirror-heap: ${MB} MB per workload at ${FEED_MBPS} MB/s, ${ROUNDS} rounds; load ${load()}`);
  for (const w of WORKLOADS.filter((x) => x.name.includes(process.env.BENCH_WORKLOAD ?? ''))) {
    const text = w.text(MB * 1024 * 1024);
    const events = eventsOf(text);
    const mb = text.length / 1048576;
    for (let r = 1; r <= ROUNDS; r++) {
      await stopMirrorThread();
      const session = new Session();
      session.connect();
      const inspector = new WorkerInspector(session);
      // Start the thread, attach, warm it up.
      const warm = new TerminalMirror({ cols: COLS, rows: ROWS, scrollback: DEFAULT_TERMINAL_SCROLLBACK });
      await inspector.attach('ts-worker-boot');
      warm.feed(eventsOf('warm\r\n'));
      await warm.snapshot();
      warm.dispose();
      if (CPU) {
        await inspector.post('Profiler.enable');
        await inspector.post('Profiler.start');
      }
      if (HEAP) await inspector.post('HeapProfiler.startSampling', { samplingInterval: SAMPLING_INTERVAL, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      const cpu0 = mirrorThreadNs();
      const t0 = performance.now();
      await mirror(events, { perTurn: 1, mbps: FEED_MBPS, utf8: BYTES });
      const wall = performance.now() - t0;
      const cpu = (mirrorThreadNs() - cpu0) / 1e6;
      const profile = HEAP ? (await inspector.post<{ profile: { head: ProfileNode } }>('HeapProfiler.stopSampling')).profile : null;
      const cpuProfile = CPU ? (await inspector.post<{ profile: CpuProfile }>('Profiler.stop')).profile : null;
      session.disconnect();
      if (OUT && profile) writeFileSync(`${OUT}-${w.name.split(' ')[0]}-${r}.heapprofile`, JSON.stringify(profile));
      console.log(`\n${w.name} #${r}: mirror thread ${(cpu / mb).toFixed(1)} ms CPU/MB, ${(wall / mb).toFixed(0)} ms wall/MB; load ${load()}`);
      if (profile) for (const l of summarise(profile.head, mb)) console.log(l);
      if (cpuProfile) for (const l of selfTimes(cpuProfile, mb)) console.log(l);
    }
  }
  await stopMirrorThread();
}

// The inspector's answers keep nothing alive (the mirror thread is unref'd while no read is out).
const alive = setInterval(() => undefined, 1000);
void main().finally(() => clearInterval(alive));
