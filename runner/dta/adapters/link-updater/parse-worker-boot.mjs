// The parser thread's entry. Node 20 does not carry the parent's `--import tsx` hooks into a
// worker's own entry module, so the thread registers tsx itself before loading the TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./parse-worker.ts');
