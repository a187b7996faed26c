/**
 * link_updater on a generated site against the classic one-liner on the same tree:
 *   (a) `grep -rl old.example.com . | xargs sed -i 's#…#…#g'` — fast, blind, unverified;
 *   (b) av-dta's dry-run + the approved apply (+ its verifier process) — parsers, a patch, an
 *       atomic apply and an independent re-count — as the gate runs them.
 * Prints both wall times and the ratio (target ≤ 3×). Asserts nothing.
 * Usage: npm run bench:dta   (BENCH_FILES, default 5000)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runDta, setVerifierMemoDir } from '../runner/dta/engine';
import { DtaPolicySchema } from '../runner/dta/policy';
import { makeRepo } from '../runner/dta/testing/fixture-repos';
import { verifiersExited } from '../runner/dta/verifier/spawn';

const FILES = Number(process.env.BENCH_FILES ?? 5000);
/** Linux reports children's CPU in clock ticks (USER_HZ, 100 on every Linux we run on). */
const CLOCK_TICKS_PER_S = 100;

/**
 * CPU seconds used so far by this process and its finished children (the verifier processes, git,
 * grep and sed): on a machine shared with other work, wall time says more about the neighbours,
 * CPU time about the work itself.
 */
function cpuSeconds(): number {
  const own = process.cpuUsage();
  let children = 0;
  try {
    // /proc/self/stat: after the ")" closing the command name, fields 14 and 15 are cutime, cstime.
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = (Number(f[13]) + Number(f[14])) / CLOCK_TICKS_PER_S;
  } catch {
    children = 0;
  }
  return (own.user + own.system) / 1e6 + children;
}
const LINKS = { from_hosts: ['http://old.example.com', 'https://old.example.com'], to_host: 'https://new.example.com' };

function site(n: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    const dir = `site/s${i % 50}`;
    const k = i % 3;
    if (k === 0) files[`${dir}/p${i}.html`] = `<!doctype html><html><head><link rel="stylesheet" href="https://old.example.com/s${i}.css"></head><body>\n${'<p>Lorem ipsum dolor sit amet.</p>\n'.repeat(20)}<a href="http://old.example.com/p${i + 1}">next</a> <a href="https://elsewhere.org/">x</a>\n<img src="https://old.example.com/i${i}.png" srcset="https://old.example.com/i${i}.png 1x, https://old.example.com/i${i}@2x.png 2x">\n</body></html>\n`;
    else if (k === 1) files[`${dir}/p${i}.md`] = `# Page ${i}\n\n${'Some prose for the page.\n'.repeat(20)}\nSee [next](http://old.example.com/p${i + 1}) and ![img](https://old.example.com/i${i}.png).\n\n[ref]: https://old.example.com/ref${i}\n`;
    else files[`${dir}/s${i}.css`] = `${'.a { color: red; }\n'.repeat(20)}.hero { background: url("https://old.example.com/h${i}.jpg"); }\n`;
  }
  return files;
}

async function main() {
  const files = site(FILES);
  const a = makeRepo(files, 'bench-dta-sed');
  const b = makeRepo(files, 'bench-dta');
  // As the runner does (runner/main.ts): the verifier's parse memo in a folder of the runner's own.
  const memoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-dta-runner-'));
  setVerifierMemoDir(memoDir);
  console.log(`${FILES} files (${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown CPU'}, load ${os.loadavg()[0]!.toFixed(2)})`);

  let c = cpuSeconds();
  let t = performance.now();
  execFileSync('sh', ['-c', "grep -rl --exclude-dir=.git old.example.com . | xargs sed -i -e 's#http://old.example.com#https://new.example.com#g' -e 's#https://old.example.com#https://new.example.com#g'"], { cwd: a });
  const sedMs = performance.now() - t;
  const sedCpu = cpuSeconds() - c;

  const policy = DtaPolicySchema.parse({ max_files: FILES + 10, rate_limit: { max_runs: 100, window_ms: 60_000 } });
  const inv = (mode: 'dry-run' | 'apply', approved?: string) => ({ tool: 'link_updater', version: '1.0', mode, target: { repo_path: b, glob: 'site/**' }, params: LINKS, constraints: { max_files: FILES + 10 }, ...(approved ? { expected_patch_sha256: approved } : {}) });
  c = cpuSeconds();
  t = performance.now();
  const dry = await runDta(inv('dry-run'), { policy });
  const dryMs = performance.now() - t;
  t = performance.now();
  // As the gate does (runner/dta/run-service.ts): the apply is bound to the patch that was approved.
  const applied = await runDta(inv('apply', dry.patch_sha256 ?? undefined), { policy });
  const applyMs = performance.now() - t;
  const dtaMs = dryMs + applyMs;
  // The verifier writes its memo after the run answered: its CPU counts once it has exited.
  await verifiersExited();
  const dtaCpu = cpuSeconds() - c;

  const same = execFileSync('diff', ['-r', '-q', '-x', '.git', '-x', '.runs', a, b], { encoding: 'utf8' }).trim() === '';
  console.log(`grep | xargs sed -i:          ${sedMs.toFixed(0)} ms (no verification)`);
  console.log(`av-dta dry-run:               ${dryMs.toFixed(0)} ms (verifier: ${dry.verifier.passed ? 'passed' : 'FAILED'})`);
  console.log(`av-dta apply + verify:        ${applyMs.toFixed(0)} ms (${applied.applied_changes.link_updates} link updates in ${applied.applied_changes.files} files, verifier: ${applied.verifier.passed ? 'passed' : 'FAILED'})`);
  console.log(`ratio (dry-run + apply) / sed: ${(dtaMs / sedMs).toFixed(1)}×   same result as sed: ${same ? 'yes' : 'no'}`);
  console.log(`CPU: sed ${sedCpu.toFixed(1)} s, av-dta ${dtaCpu.toFixed(1)} s (ratio ${(dtaCpu / Math.max(sedCpu, 0.01)).toFixed(1)}×); load now ${os.loadavg()[0]!.toFixed(2)}`);
  fs.rmSync(a, { recursive: true, force: true });
  fs.rmSync(b, { recursive: true, force: true });
  fs.rmSync(memoDir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
