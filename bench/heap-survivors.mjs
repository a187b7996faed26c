/**
 * What of the control plane's allocations outlived a scavenge, by allocating function:
 * `node bench/heap-survivors.mjs FILE.heapprofile` prints the top allocation sites of a profile
 * that bench/control-plane-flood.ts took with BENCH_SURVIVORS=DIR (bench/live-heap.mjs, sampling
 * without the objects scavenges collected). Read it with care: what a mark-compact collected is
 * in it too, young garbage included, and in a flood mark-compacts ran as often as scavenges
 * (issue 17): the frames' decoded text once looked "promoted" that way. `--trace-gc-nvp`
 * (BENCH_TRACE_GC=1) counts what scavenges really promoted.
 */
import { readFileSync } from 'node:fs';

const TOP = 25;

/** Each allocation site (function, file:line and the two callers above it) with its sampled bytes, largest first. */
function report(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const bytes = new Map();
  let total = 0;
  const frame = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
  const walk = (node, path) => {
    const here = [...path, frame(node)];
    if (node.selfSize) {
      const key = here.slice(-3).reverse().join(' ← ');
      bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const c of node.children ?? []) walk(c, here);
  };
  walk(profile.head, []);
  console.log(`sampled bytes a scavenge did not collect: ${(total / 1048576).toFixed(1)} MB`);
  for (const [k, v] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    console.log(`${(v / 1048576).toFixed(2).padStart(8)} MB ${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
  }
}

if (!process.argv[2]) {
  console.error('usage: node bench/heap-survivors.mjs FILE.heapprofile');
  process.exit(2);
}
report(process.argv[2]);
