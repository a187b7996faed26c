import { parentPort } from 'node:worker_threads';
import { parseLinks, useReaders, type Readers } from './parsers';

/**
 * One parser thread of the pool (parse-pool.ts): batches of [path, text] in, each file's links
 * out, in the same order. Only the pure parsers are loaded here — no cache, no store: what the
 * thread answers is what the parsers said about the text it was sent.
 */
export interface ParseRequest {
  id: number;
  files: Array<[string, string]>;
  /** The calling thread's parsers (the verifier's differ from the adapter's). */
  readers: Readers;
}
export type ParseReply = { id: number; links: ReturnType<typeof parseLinks>[] } | { id: number; error: string } | { ready: true };

parentPort?.on('message', (req: ParseRequest) => {
  try {
    useReaders(req.readers === 'verifier' ? 'verifier' : 'adapter');
    parentPort!.postMessage({ id: req.id, links: req.files.map(([rel, text]) => parseLinks(rel, text)) } satisfies ParseReply);
  } catch (err) {
    parentPort!.postMessage({ id: req.id, error: err instanceof Error ? err.message : String(err) } satisfies ParseReply);
  }
});

// The parsers are loaded: the pool may hand this thread work (until now the caller did it all).
parentPort?.postMessage({ ready: true } satisfies ParseReply);
