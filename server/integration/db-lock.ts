import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT } from './harness';

/**
 * Another process takes SQLite's write lock on `file` and holds it for `ms` (as a backup, a long
 * report query or a migration would). Resolves once the lock is held; `done` once it is released.
 */
export async function holdWriteLock(file: string, ms: number): Promise<{ child: ChildProcess; done: Promise<void> }> {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { createClient } from '@libsql/client';
       const c = createClient({ url: process.argv[1] });
       // The server writes all the time: wait for its lock like any other writer, then keep ours.
       await c.execute('PRAGMA busy_timeout = 30000');
       const tx = await c.transaction('write');
       await tx.execute('UPDATE "Org" SET "name" = "name"');
       console.log('locked');
       setTimeout(async () => { await tx.commit(); c.close(); }, Number(process.argv[2]));`,
      `file:${file}`,
      String(ms),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const done = new Promise<void>((res) => child.once('exit', () => res()));
  await new Promise<void>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('locked')) res();
    });
    child.once('exit', (code) => rej(new Error(`the lock holder exited with ${code} before locking`)));
  });
  return { child, done };
}
