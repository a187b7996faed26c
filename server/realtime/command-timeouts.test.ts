import { describe, expect, it } from 'vitest';
import { CLONE_COMMAND_TIMEOUT_MS, commandTimeoutMs } from './runner-namespace';

describe('runner command timeouts', () => {
  it('gives the commands that may clone a repository the clone timeout, and the rest 15 s', () => {
    for (const name of ['repo:scan', 'repo:inspect', 'session:create']) expect(commandTimeoutMs(name)).toBe(CLONE_COMMAND_TIMEOUT_MS);
    for (const name of ['session:input', 'session:stop', 'session:approve']) expect(commandTimeoutMs(name)).toBe(15_000);
    expect(CLONE_COMMAND_TIMEOUT_MS).toBeGreaterThanOrEqual(10 * 60_000);
  });
});
