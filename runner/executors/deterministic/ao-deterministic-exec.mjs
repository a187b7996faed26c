#!/usr/bin/env node
// The deterministic executor as its own program: `ao-deterministic-exec.mjs < invocation.json`.
// Plain .mjs so it starts without a loader on the command line; it brings tsx in itself (resolved
// from this file, not from the working directory, which is the blueprint's project) and runs main.ts.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
