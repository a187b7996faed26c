/**
 * link_updater on a generated site against the classic one-liner on the same tree:
 *   (a) `grep -rl old.example.com . | xargs sed -i 's#…#…#g'` — fast, blind, unverified;
 *   (b) av-dta's dry-run + the approved apply (+ its verifier process) — parsers, a patch, an
 *       atomic apply and an independent re-count — as the gate runs them.
 * Both sides start from the same disk state (disk-state.ts, bench:dta-disk): each on its own tree
 * from the same generator, made just before its timed part (not yet written back: renaming over a
 * flushed file waits for the device here); no tree is removed before the bench ends (files made
 * within a minute of a mass removal nearby cost ~10× the system CPU here); the side that goes first
 * alternates by round (each side's own renames and removals fall on the other alike). Prints
 * each side's wall time and CPU, user and system (the system part shows the disk's slow mode), then
 * the target's line against the fastest sed of the rounds (what an outside checker sees on a good
 * day) and the median of the rounds' own ratios. Each round is labelled by the disk's mode (sed's
 * system CPU per file, SLOW_MODE_SED_SYS_MS_PER_FILE) and each mode's rounds are summed up apart.
 * Asserts nothing.
 * Usage: npm run bench:dta   (BENCH_FILES, default 5000; BENCH_ROUNDS, default 3; BENCH_SYNC=1 flushes
 * each tree to disk before its part, as a repository's old files are; BENCH_VERIFIER=cold starts a
 * fresh spare verifier for each round instead of keeping the last one warm; BENCH_STAGES=1 also prints
 * each round's timeline of stages, runner and verifier process on one clock)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { originalsReleased } from '../runner/dta/atomic-apply-held';
import { runDta, setVerifierMemoDir } from '../runner/dta/engine';
import { DtaPolicySchema } from '../runner/dta/policy';
import { readMarks, STAGES_ENV, type StageMark } from '../runner/dta/stages';
import { benchSite } from '../runner/dta/testing/bench-site';
import { makeRepo } from '../runner/dta/testing/fixture-repos';
import { ensureVerifierBundle } from '../runner/dta/verifier/bundle';
import { endSpareVerifier, spareVerifierPid, verifiersExited, warmVerifier } from '../runner/dta/verifier/spawn';
import { cpuNow, cpuSince, diskFacts, type Cpu } from './disk-state';

const FILES = Number(process.env.BENCH_FILES ?? 5000);
/** Rounds, each on fresh trees; the summary is their median (one round on a shared machine says little). */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
/** BENCH_SYNC=1: each tree is on disk before its timed part (removing or renaming over a file then frees its blocks). */
const SYNC = process.env.BENCH_SYNC === '1';
/** Issue 15's target: link_updater within this factor of grep | sed, in wall time and in CPU. */
const TARGET_RATIO = 3;
/** BENCH_VERIFIER=cold: a fresh spare verifier for each round (the baseline), not the last round's, warm. */
const COLD = process.env.BENCH_VERIFIER === 'cold';
/** BENCH_STAGES=1: each round's stages (runner/dta/stages.ts), printed after its line. */
const STAGES = process.env.BENCH_STAGES === '1';
/** One file for every round: a verifier's environment is set when it starts, before the round that takes it. */
const STAGES_FILE = path.join(os.tmpdir(), `bench-dta-stages-${process.pid}.jsonl`);
const SED = "grep -rl --exclude-dir=.git old.example.com . | xargs sed -i -e 's#http://old.example.com#https://new.example.com#g' -e 's#https://old.example.com#https://new.example.com#g'";

/**
 * The stages of a round's dry-run and apply on one timeline: each mark's time from its run's start,
 * and the wall and CPU time from the previous mark of the same process (what that stage took).
 */
function printStages(marks: StageMark[]): void {
  const runs: StageMark[][] = [];
  for (const m of marks) {
    if (m.name === 'run: start' || runs.length === 0) runs.push([]);
    runs[runs.length - 1]!.push(m);
  }
  // Marks before the dry-run's start: the spare verifier's own start, ahead of the round.
  const names = runs[0]?.[0]?.name === 'run: start' ? ['dry-run', 'apply'] : ['spare', 'dry-run', 'apply'];
  const engine = process.pid;
  runs.forEach((run, i) => {
    const t0 = run[0]!.at;
    const last = new Map<number, StageMark>();
    console.log(`  ${(names[i] ?? 'run').padEnd(8)}:    at   +wall    +cpu`);
    for (const m of run) {
      const prev = last.get(m.pid);
      last.set(m.pid, m);
      const f = (x: number) => x.toFixed(0).padStart(6);
      console.log(`    ${f(m.at - t0)} ms  ${f(m.at - (prev?.at ?? t0))}  ${f(m.cpu - (prev?.cpu ?? m.cpu))}  ${m.pid === engine ? 'runner  ' : 'verifier'}  ${m.name}`);
    }
  });
}

const LINKS = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };

/** One round: sed on one fresh tree, av-dta's dry-run + approved apply on another, the same files. */
interface Round {
  sedMs: number;
  sedCpu: Cpu;
  dryMs: number;
  applyMs: number;
  dtaCpu: Cpu;
  verified: boolean;
  same: boolean;
  updates: number;
  files: number;
  sedFirst: boolean;
}

const total = (c: Cpu) => c.user + c.sys;
/**
 * sed's system CPU per file of the site above which a round counts as the disk's slow mode
 * (disk-state.ts: files made within a minute of many inode frees): quiet rounds here took
 * 0.06–0.08 ms per file (0.28–0.41 s for 5,000), slow ones 0.1–0.46 ms (0.51–2.3 s).
 */
const SLOW_MODE_SED_SYS_MS_PER_FILE = 0.1;
const slowMode = (r: Round) => (r.sedCpu.sys * 1000) / FILES >= SLOW_MODE_SED_SYS_MS_PER_FILE;
const load = () => os.loadavg()[0]!.toFixed(2);

/** A side's tree, made just before its timed part (and flushed with BENCH_SYNC=1); removed when the bench ends. */
function freshTree(files: Record<string, string>, prefix: string, leftovers: string[]): string {
  const dir = makeRepo(files, prefix);
  leftovers.push(dir);
  if (SYNC) execFileSync('sync');
  return dir;
}

function sedSide(dir: string): { ms: number; cpu: Cpu } {
  const c = cpuNow();
  const t = performance.now();
  execFileSync('sh', ['-c', SED], { cwd: dir });
  return { ms: performance.now() - t, cpu: cpuSince(c) };
}

/**
 * The warm verifier's CPU (verifier/spawn.ts): it outlives the round that used it, so the reaped
 * children's CPU never holds it; read from /proc/<pid>/stat (utime, stime) instead. Per process, the
 * CPU already counted: a spare the bench started counts from 0 (its start, as a cold one's did at
 * its exit); between rounds (idle, off any timed part) is not counted.
 */
const verifierCounted = new Map<number, Cpu>();
/** Clock ticks a second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;
function procCpu(pid: number): Cpu | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the ")" closing the command name, fields 12 and 13 (from 0) are utime and stime.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(f[11]) / TICKS_PER_S, sys: Number(f[12]) / TICKS_PER_S };
  } catch {
    return null;
  }
}

/** A spare the bench started before the rounds: its start counts in the first round, not before it. */
const countFromStart = new Set<number>();

/** Starts a spare verifier, its CPU counted from its start in the round that takes it. */
function freshSpare(): void {
  const pid = warmVerifier();
  if (pid === null) return;
  verifierCounted.set(pid, { user: 0, sys: 0 });
  countFromStart.add(pid);
}

/** At a round's start: each kept verifier's CPU so far is not this round's (one gone meanwhile was reaped outside any round). */
function verifierCpuAtStart(): void {
  for (const pid of verifierCounted.keys()) {
    if (countFromStart.has(pid)) continue;
    const now = procCpu(pid);
    if (now) verifierCounted.set(pid, now);
    else verifierCounted.delete(pid);
  }
}

/**
 * At a round's end: the spare's CPU since the round's start (all of it when new), less what was
 * counted already of a verifier that exited within the round (the reaped children's CPU holds its whole life).
 */
function verifierCpuAtEnd(): Cpu {
  const extra: Cpu = { user: 0, sys: 0 };
  const spare = spareVerifierPid();
  for (const [pid, counted] of verifierCounted) {
    if (pid === spare || procCpu(pid)) continue;
    extra.user -= counted.user;
    extra.sys -= counted.sys;
    verifierCounted.delete(pid);
  }
  const now = spare === null ? null : procCpu(spare);
  if (spare !== null && now) {
    const before = verifierCounted.get(spare) ?? { user: 0, sys: 0 };
    extra.user += now.user - before.user;
    extra.sys += now.sys - before.sys;
    verifierCounted.set(spare, now);
  }
  countFromStart.clear();
  return extra;
}

async function dtaSide(dir: string, n: number) {
  const policy = DtaPolicySchema.parse({ max_files: n + 10, rate_limit: { max_runs: 100, window_ms: 60_000 } });
  const inv = (mode: 'dry-run' | 'apply', approved?: string) => ({ tool: 'link_updater', version: '1.0', mode, target: { repo_path: dir, glob: 'site/**' }, params: LINKS, constraints: { max_files: n + 10 }, ...(approved ? { expected_patch_sha256: approved } : {}) });
  verifierCpuAtStart();
  const c = cpuNow();
  let t = performance.now();
  // As the gate does: the dry-run stages its new contents for the apply that follows in this process.
  const dry = await runDta(inv('dry-run'), { policy, stageForApply: true });
  const dryMs = performance.now() - t;
  t = performance.now();
  // As the gate does (runner/dta/run-service.ts): the apply is bound to the patch that was approved.
  const applied = await runDta(inv('apply', dry.patch_sha256 ?? undefined), { policy });
  const applyMs = performance.now() - t;
  // The verifier writes its memo (and waits, warm, for the next run), and the apply frees its old
  // files, after the run answered: their CPU counts once they are done.
  await Promise.all([verifiersExited(), originalsReleased()]);
  const own = cpuSince(c);
  const verifier = verifierCpuAtEnd();
  return { dryMs, applyMs, cpu: { user: own.user + verifier.user, sys: own.sys + verifier.sys }, dry, applied };
}

/** One round on two identical trees, each made just before its side; main() removes them when all rounds are done. */
async function round(files: Record<string, string>, n: number, i: number, leftovers: string[]): Promise<Round> {
  // As the runner does (runner/main.ts): the verifier's parse memo in a folder of the runner's own.
  const memoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dta-runner-'));
  leftovers.push(memoDir);
  setVerifierMemoDir(memoDir);
  // Alternately first: each side's own renames and removals (5,000 inodes freed) fall on the other alike.
  const sedFirst = i % 2 === 0;
  let a: string;
  let b: string;
  let sed: ReturnType<typeof sedSide>;
  let dta: Awaited<ReturnType<typeof dtaSide>>;
  if (sedFirst) {
    sed = sedSide((a = freshTree(files, 'bench-dta-sed', leftovers)));
    dta = await dtaSide((b = freshTree(files, 'bench-dta', leftovers)), n);
  } else {
    dta = await dtaSide((b = freshTree(files, 'bench-dta', leftovers)), n);
    sed = sedSide((a = freshTree(files, 'bench-dta-sed', leftovers)));
  }
  if (STAGES) {
    printStages(readMarks(STAGES_FILE));
    // The next round's marks only (the spare verifier it takes was started with this file in its environment).
    fs.writeFileSync(STAGES_FILE, '');
  }
  const same = execFileSync('diff', ['-r', '-q', '-x', '.git', '-x', '.runs', a, b], { encoding: 'utf8' }).trim() === '';
  const { dry, applied } = dta;
  return { sedMs: sed.ms, sedCpu: sed.cpu, dryMs: dta.dryMs, applyMs: dta.applyMs, dtaCpu: dta.cpu, verified: dry.verifier.passed && applied.verifier.passed, same, updates: Number(applied.applied_changes.link_updates ?? 0), files: applied.applied_changes.files ?? 0, sedFirst };
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function main() {
  // As a runner has it by its first run (npm run build, npm start, or its first verifier): built once, not timed.
  const bundle = await ensureVerifierBundle();
  console.log(`verifier: ${bundle ? `prebuilt (${path.relative(process.cwd(), bundle)})` : 'through tsx (no prebuilt entry)'}, ${COLD ? 'a fresh spare each round (BENCH_VERIFIER=cold)' : 'warm after the first round'}`);
  if (STAGES) process.env[STAGES_ENV] = STAGES_FILE;
  // As a runner has it before its first run: a spare verifier started (verifier/spawn.ts). It serves
  // the first round cold, then stays warm for the next (as on a runner after its first run); its CPU
  // is read from /proc, its start counted in the first round (verifierCpuAtEnd).
  freshSpare();
  const loadAtStart = load();
  console.log(`${FILES} files, ${ROUNDS} round(s) (${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown CPU'}, load ${loadAtStart})`);
  console.log(`disk: ${diskFacts(os.tmpdir())}; each tree made just before its side, ${SYNC ? 'then flushed to disk (BENCH_SYNC=1)' : 'not flushed'}; trees removed at the end`);
  const rounds: Round[] = [];
  const cpuText = (c: Cpu) => `${total(c).toFixed(2)} s (user ${c.user.toFixed(2)}, sys ${c.sys.toFixed(2)})`;
  const leftovers: string[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const r = await round(benchSite(FILES, i), FILES, i, leftovers).catch((err: unknown) => {
      for (const d of leftovers) fs.rmSync(d, { recursive: true, force: true });
      throw err;
    });
    rounds.push(r);
    // The baseline: each round's verifier a fresh spare, as before verifiers were kept warm.
    if (COLD) {
      endSpareVerifier();
      freshSpare();
    }
    // Each round on its own line: on a shared machine one round can be an outlier either way.
    console.log(`round ${i + 1} (${r.sedFirst ? 'sed' : 'av-dta'} first): sed ${r.sedMs.toFixed(0)} ms, CPU ${cpuText(r.sedCpu)} | av-dta dry-run ${r.dryMs.toFixed(0)} ms + apply/verify ${r.applyMs.toFixed(0)} ms, CPU ${cpuText(r.dtaCpu)} | ${((r.dryMs + r.applyMs) / r.sedMs).toFixed(1)}× wall; disk ${slowMode(r) ? 'SLOW' : 'normal'} mode; verified ${r.verified ? 'yes' : 'NO'}, same as sed ${r.same ? 'yes' : 'NO'}; load ${load()}`);
  }
  const m = (f: (r: Round) => number) => median(rounds.map(f));
  const last = rounds[rounds.length - 1]!;
  const fastSed = rounds.reduce((a, r) => (r.sedMs < a.sedMs ? r : a));
  const dtaWall = m((r) => r.dryMs + r.applyMs);
  const dtaCpu = m((r) => total(r.dtaCpu));
  console.log(`median of ${ROUNDS}:`);
  console.log(`grep | xargs sed -i:          ${m((r) => r.sedMs).toFixed(0)} ms, CPU ${m((r) => total(r.sedCpu)).toFixed(2)} s; fastest ${fastSed.sedMs.toFixed(0)} ms, CPU ${total(fastSed.sedCpu).toFixed(2)} s (no verification)`);
  console.log(`av-dta dry-run:               ${m((r) => r.dryMs).toFixed(0)} ms (verifier: ${rounds.every((r) => r.verified) ? 'passed' : 'FAILED'})`);
  console.log(`av-dta apply + verify:        ${m((r) => r.applyMs).toFixed(0)} ms (${last.updates} link updates in ${last.files} files), DTA CPU ${dtaCpu.toFixed(2)} s`);
  console.log(`same result as sed: ${rounds.every((r) => r.same) ? 'yes' : 'NO'}`);
  // Which rounds met the disk's slow mode (sed's system CPU says it): each mode's rounds apart, as
  // a slow sed beside a normal av-dta (or the reverse) says more about the disk than about either.
  for (const [mode, rs] of [['normal', rounds.filter((r) => !slowMode(r))], ['slow', rounds.filter(slowMode)]] as const) {
    if (rs.length === 0) continue;
    const mm = (f: (r: Round) => number) => median(rs.map(f));
    console.log(`disk ${mode} mode, ${rs.length} round(s) (${rs.map((r) => rounds.indexOf(r) + 1).join(', ')}): sed ${mm((r) => r.sedMs).toFixed(0)} ms (sys ${mm((r) => r.sedCpu.sys).toFixed(2)} s), av-dta ${mm((r) => r.dryMs).toFixed(0)} + ${mm((r) => r.applyMs).toFixed(0)} ms (sys ${mm((r) => r.dtaCpu.sys).toFixed(2)} s), ${mm((r) => (r.dryMs + r.applyMs) / r.sedMs).toFixed(1)}× wall`);
  }
  console.log(`each round against its own sed (median of ratios): wall ${m((r) => (r.dryMs + r.applyMs) / r.sedMs).toFixed(1)}×, CPU ${m((r) => total(r.dtaCpu) / Math.max(total(r.sedCpu), 0.01)).toFixed(1)}×`);
  // The target's figures: the DTA's median against the fastest sed of the rounds — a slow sed
  // (a busy disk or neighbours) must not make the DTA look close; the load says how far to trust them.
  const wall = dtaWall / fastSed.sedMs;
  const cpu = dtaCpu / Math.max(total(fastSed.sedCpu), 0.01);
  const verdict = (x: number) => (x <= TARGET_RATIO ? 'met' : 'not met');
  console.log(`TARGET (≤${TARGET_RATIO}× of the fastest grep|sed of ${ROUNDS} rounds, av-dta's median, load ${loadAtStart} → ${load()}): wall ${wall.toFixed(1)}× (${verdict(wall)}), CPU ${cpu.toFixed(1)}× (${verdict(cpu)})`);
  for (const d of leftovers) fs.rmSync(d, { recursive: true, force: true });
  fs.rmSync(STAGES_FILE, { force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
