import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DtaVerifierSchema, type DtaVerifier } from '../../../protocol';
import type { VerifyRequest } from './verify';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
/** The verifier runs TypeScript through tsx, resolved from here (its cwd may be any repository). */
const TSX = import.meta.resolve('tsx');

/** A verifier process started ahead of its request. */
export interface PendingVerifier {
  /** Sends the request; a crash, a timeout (counted from here) or garbage output is a failed verification. */
  run(req: VerifyRequest, timeoutMs: number): Promise<DtaVerifier>;
  /** Ends a process that will get no request (the run failed first); nothing once run() was called. */
  cancel(): void;
}

/**
 * Starts the verifier process before the run has anything to ask it: its start (node, tsx and its
 * modules: ~0.4 s of CPU) overlaps the adapter's own work instead of following it. It reads no
 * request — so nothing of the adapter's — until run().
 */
export function startVerifier(cwd: string): PendingVerifier {
  const child = spawn(process.execPath, ['--import', TSX, MAIN], { cwd, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  let out = '';
  let err = '';
  let timer: NodeJS.Timeout | null = null;
  let timeoutMs = 0;
  let sent = false;
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  // A child that died before its request was written makes stdin error (EPIPE): 'close' reports it.
  child.stdin.on('error', () => undefined);
  const failed = (why: string): DtaVerifier => ({ passed: false, checks: [], failures: [why], sample_size: 0 });
  const result = new Promise<DtaVerifier>((resolve) => {
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      resolve(failed(`the verifier could not start: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      try {
        const parsed = DtaVerifierSchema.safeParse(JSON.parse(out));
        if (parsed.success) return resolve(parsed.data);
      } catch {
        // fall through
      }
      resolve(failed(signal === 'SIGKILL' && timer ? `the verifier did not finish within ${timeoutMs} ms` : `the verifier ended (${code ?? signal}) without a result: ${err.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
  return {
    run(req, ms) {
      sent = true;
      timeoutMs = ms;
      timer = setTimeout(() => child.kill('SIGKILL'), ms);
      child.stdin.end(JSON.stringify(req));
      return result;
    },
    cancel() {
      if (!sent) child.kill('SIGKILL');
    },
  };
}

/** Runs the verifier in a separate process; a crash, a timeout or garbage output is a failed verification. */
export function runVerifier(req: VerifyRequest, timeoutMs: number): Promise<DtaVerifier> {
  return startVerifier(req.root).run(req, timeoutMs);
}
