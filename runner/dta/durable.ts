import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';

/**
 * Getting bytes onto the disk for the atomic apply (atomic-apply.ts): the journal before the first
 * rename it guards, the new contents before the apply is reported complete, the originals before a
 * rollback's journal goes.
 */

export function writeDurable(file: string, data: string | Buffer, mode?: number): void {
  const fd = fs.openSync(file, 'w', mode ?? 0o644);
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A folder's entries made durable (a file's name must be on disk, or its removal). */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function fsyncEach(files: string[]): void {
  for (const f of files) {
    const fd = fs.openSync(f, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
}

/**
 * Everything written on `dir`'s filesystem, on disk: one syncfs (`sync -f`) instead of an fsync
 * per file (5,000 files: one flush instead of 5,000). Where `sync -f` is missing, `files` one by one.
 */
export function flushAll(dir: string, files: string[]): void {
  try {
    execFileSync('sync', ['-f', dir], { stdio: 'ignore' });
  } catch {
    fsyncEach(files);
  }
}

/**
 * flushAll() in the background: the syncfs runs in its own process while this one goes on (the
 * apply's verifier reads the new files from the page cache meanwhile). Rejects when the files
 * cannot be flushed.
 */
export function flushAllAsync(dir: string, files: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('sync', ['-f', dir], (err) => {
      if (!err) return resolve();
      try {
        fsyncEach(files);
        resolve();
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  });
}
