/**
 * Preloaded with `--import` by bench/control-plane-flood.ts (BENCH_TRACE_GC=1): `--trace-gc-nvp` is
 * refused in NODE_OPTIONS, so the control plane turns it on itself. Every isolate of the process
 * (the main thread and its worker threads) then logs each collection to stdout as name=value
 * pairs: its pause, what was allocated since the last one, what survived and what was promoted.
 */
import v8 from 'node:v8';

v8.setFlagsFromString('--trace-gc-nvp');
