import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * V8 tells whether an object is in fast mode only behind --allow-natives-syntax, so each check runs
 * in a child process with it: the control plane's Redis client is loaded first (it subclasses
 * String, which is what slows String.prototype down), then the start-up call.
 */
function fastAfter(steps: string): boolean {
  const script = `
    await import('ioredis');
    ${steps}
    process.stdout.write(String(eval('%HasFastProperties(String.prototype)')));
  `;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' });
  return out.trim() === 'true';
}

describe('keepStringPrototypeFast', () => {
  it('leaves String.prototype fast after ioredis subclassed String, and fast through a later subclass', () => {
    expect(
      fastAfter(`
        const { keepStringPrototypeFast } = await import('./server/fast-string-prototype.ts');
        keepStringPrototypeFast();
        globalThis.Later = class Later extends String {};
      `),
    ).toBe(true);
  });

  it('is needed: without it, loading ioredis leaves String.prototype slow (if V8 stops doing that, this call can go)', () => {
    expect(fastAfter('')).toBe(false);
  });
});
