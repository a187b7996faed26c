import { describe, expect, it } from 'vitest';
import { dtaForEdit, strictRefusal } from './strict-tools';

describe('strict tools: which edits a DTA covers', () => {
  it('a link-only edit in HTML or Markdown belongs to the link DTAs; prose edits stay free', () => {
    expect(dtaForEdit('site/a.html', '<a href="http://old.example.com/x">x</a>', '<a href="https://new.example.com/x">x</a>')).toBe('link_updater');
    expect(dtaForEdit('site/a.html', '<p>old words</p>', '<p>new words</p>')).toBeNull();
    expect(dtaForEdit('docs/a.md', 'See [guide](guide.md).', 'See [guide](handbook/guide.md).')).toBe('intra_repo_link_fixer');
    expect(dtaForEdit('docs/a.md', 'See [guide](guide.md).', 'Read [guide](guide.md).')).toBeNull();
  });

  it('a consistent identifier rename in code belongs to rename_refactor; other code edits stay free', () => {
    expect(dtaForEdit('src/a.ts', 'const total = addNumbers(1, 2);\nexport { addNumbers };', 'const total = sum(1, 2);\nexport { sum };')).toBe('rename_refactor');
    expect(dtaForEdit('src/a.ts', 'return a + b;', 'return a - b;')).toBeNull();
    expect(dtaForEdit('README.txt', 'addNumbers', 'sum')).toBeNull();
    expect(strictRefusal('rename_refactor', 'src/a.ts')).toMatch(/rename_refactor DTA.*av-dta run/);
  });
});

describe('strict tools in the provider hooks (the real HookBridge)', () => {
  it('a hand edit a DTA covers is denied with the DTA named and a POLICY_BLOCKED event; a free edit is allowed', async () => {
    const { HookBridge } = await import('../hooks/hook-bridge');
    const { strictToolsFor } = await import('./strict-tools');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const wt = fs.mkdtempSync(path.join(os.tmpdir(), 'strict-'));
    fs.writeFileSync(path.join(wt, 'index.html'), '<a href="http://old.example.com/">home</a>\n');
    const events: unknown[] = [];
    const bridge = new HookBridge({ provider: 'claude', worktree: wt, sink: { emit: (e) => void events.push(e), activity: () => undefined, fileTouched: () => undefined }, strictTools: strictToolsFor(wt) });
    const pre = (tool_name: string, tool_input: Record<string, unknown>) => JSON.parse(bridge.handle({ provider: 'claude', event: 'PreToolUse', payload: { cwd: wt, tool_name, tool_input } }).stdout ?? '{}');
    const denied = pre('Write', { file_path: path.join(wt, 'index.html'), content: '<a href="https://new.example.com/">home</a>\n' });
    expect(denied.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: expect.stringMatching(/link_updater DTA/) });
    expect(events).toEqual([expect.objectContaining({ type: 'POLICY_BLOCKED', rule: 'strict_tools', outcome: 'prevented' })]);
    const free = pre('Edit', { file_path: 'index.html', old_string: 'home', new_string: 'start' });
    expect(free.hookSpecificOutput?.permissionDecision).toBe('allow');
    fs.rmSync(wt, { recursive: true, force: true });
  });
});
