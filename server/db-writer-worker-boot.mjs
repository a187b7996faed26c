// The SQLite ingest writer thread's entry. Node does not carry the parent's `--import tsx` hooks
// into a worker's own entry module, so the thread registers tsx itself before loading the
// TypeScript (as services/terminal/mirror-worker-boot.mjs does).
import { register } from 'tsx/esm/api';

register();
await import('./db-writer-worker.ts');
