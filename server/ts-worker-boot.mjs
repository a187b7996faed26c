// The entry of the control plane's TypeScript worker threads (ts-worker.ts starts them). Node does
// not carry the parent's `--import tsx` hooks into a worker's own entry module, so the thread
// registers tsx itself, then loads the TypeScript module named by its one argument.
import { register } from 'tsx/esm/api';

register();
await import(process.argv[2]);
