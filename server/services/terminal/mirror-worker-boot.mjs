// The mirror thread's entry. Node does not carry the parent's `--import tsx` hooks into a worker's
// own entry module, so the thread registers tsx itself before loading the TypeScript (as
// runner/dta/adapters/link-updater/parse-worker-boot.mjs does).
import { register } from 'tsx/esm/api';

register();
await import('./mirror-worker.ts');
