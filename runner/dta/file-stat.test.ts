import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { racyStat, RACY_MS, readWithStat, sameStat, statOf } from './file-stat';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-stat-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('readWithStat', () => {
  it('reads every byte, whatever the size, with the stat of the file read', () => {
    for (const size of [0, 1, 4096, 65_537]) {
      const file = path.join(dir, `f${size}`);
      fs.writeFileSync(file, Buffer.alloc(size, size % 251));
      const { bytes, stat } = readWithStat(file);
      expect(bytes.equals(fs.readFileSync(file))).toBe(true);
      expect(sameStat(stat, statOf(file))).toBe(true);
    }
  });

  it('reads to the end past the size its stat gave (a file that says 0 bytes and has more)', () => {
    const { bytes, stat } = readWithStat('/proc/self/status');
    expect(stat[0]).toBe(0);
    expect(bytes.toString()).toMatch(/^Name:/);
  });

  it('a stat taken within RACY_MS of the file\'s last change cannot vouch for it', () => {
    const file = path.join(dir, 'racy');
    fs.writeFileSync(file, 'x');
    const stat = statOf(file);
    expect(racyStat(stat, stat[2])).toBe(true);
    expect(racyStat(stat, stat[2] + RACY_MS + 1)).toBe(false);
  });
});
