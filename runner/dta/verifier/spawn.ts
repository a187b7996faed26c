import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DtaVerifierSchema, type DtaVerifier } from '../../../protocol';
import type { VerifyRequest } from './verify';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
/** The verifier runs TypeScript through tsx, resolved from here (its cwd may be any repository). */
const TSX = import.meta.resolve('tsx');

/** Runs the verifier in a separate process; a crash, a timeout or garbage output is a failed verification. */
export function runVerifier(req: VerifyRequest, timeoutMs: number): Promise<DtaVerifier> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', TSX, MAIN], { cwd: req.root, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const failed = (why: string): DtaVerifier => ({ passed: false, checks: [], failures: [why], sample_size: 0 });
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve(failed(`the verifier could not start: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      try {
        const parsed = DtaVerifierSchema.safeParse(JSON.parse(out));
        if (parsed.success) return resolve(parsed.data);
      } catch {
        // fall through
      }
      resolve(failed(signal === 'SIGKILL' ? `the verifier did not finish within ${timeoutMs} ms` : `the verifier ended (${code ?? signal}) without a result: ${err.trim().split('\n').slice(-3).join(' ')}`));
    });
    child.stdin.end(JSON.stringify(req));
  });
}
