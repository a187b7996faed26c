import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last mark-compact left alive before it
 * starts the next one, in percent (V8's `--heap-growing-percent`; 100: to twice the live size).
 *
 * Left to itself, V8 sizes that room by how fast the old generation grows against how fast it is
 * collected. In a terminal flood the control plane's old generation hardly grows (scavenges
 * promote 0.01–0.04 MB per MB of output), so V8 picks its floor, 1.1 (`--trace-gc-verbose`:
 * "factor 1.1 based on mu=0.970, speed_ratio=519"), and sets the next limit ~27 MB above a
 * ~110 MB live heap (mostly Next's and Prisma's code): close enough that incremental marking
 * starts again at once after each mark-compact (`--trace-incremental-marking`: "Start (task):
 * 109MB / 136MB / 27MB"). Issue 17: 3–9 mark-compacts per 64 MB, each marking the whole heap on
 * V8's helper threads and in steps on the main thread, ~12 ms of CPU per MB of output in all,
 * for ~12 MB of young garbage each could as well have left to a scavenge. With room to twice
 * the live heap a flood of 64 MB runs no mark-compact (bench/control-plane-flood.ts).
 *
 * The price is memory only when old garbage does pile up: the old generation may reach about
 * twice its live size before it is collected (`--max-old-space-size` still bounds it).
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * Sets the room for this process (V8's flags are per process: the control plane's worker threads
 * get it too). Call it first at start-up; V8 reads it whenever a mark-compact sets the next limit.
 */
export function giveOldGenerationRoom(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/**
 * The young generation's floor, in MB per semi-space (V8's `--min-semi-space-size`; V8's default
 * is 1 MB, and its ceiling here 16 MB). V8 grows the young generation by doubling while a flood
 * allocates and shrinks it back to the floor once the process has been idle for a while (its
 * memory reducer), so a flood after a pause started from 1 MB: 32–46 scavenges per 64 MB
 * instead of ~8, each copying the frames in flight again (issue 17). At the ceiling it stays
 * where a flood needs it; the price is 32 MB of memory that is reserved anyway while output flows.
 */
export const MIN_SEMI_SPACE_MB = 16;

/**
 * V8 flags the control plane needs on node's command line: V8 sizes the young generation when it
 * sets up the heap, before any code runs (`v8.setFlagsFromString` is too late for it), and
 * NODE_OPTIONS refuses the flag. `npm start` and `npm run dev` (package.json) carry them too; a
 * unit test keeps the two in step.
 */
export const CONTROL_PLANE_NODE_FLAGS: readonly string[] = [`--min-semi-space-size=${MIN_SEMI_SPACE_MB}`];

/** node's arguments for the control plane started as a process from the project root (tests, benches): as `npm start` starts it. */
export const CONTROL_PLANE_ARGS: readonly string[] = [...CONTROL_PLANE_NODE_FLAGS, '--import', 'tsx', 'server/index.ts'];
