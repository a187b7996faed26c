import { describe, expect, it } from 'vitest';
import { withContext } from './index';

describe('withContext: a finished run reaches Claude Code as additionalContext', () => {
  const notes = ['Agent Village: the deterministic agent "echo-json" (run run_x) completed.'];

  it('rides on the answer to PostToolUse and UserPromptSubmit', () => {
    for (const event of ['PostToolUse', 'UserPromptSubmit']) {
      const reply = withContext('claude', event, {}, notes);
      expect(JSON.parse(reply!.stdout!)).toEqual({ hookSpecificOutput: { hookEventName: event, additionalContext: notes[0] } });
    }
  });

  it('waits when there is nothing to say, another CLI or event, or a decision already in the answer', () => {
    expect(withContext('claude', 'PostToolUse', {}, [])).toBeNull();
    expect(withContext('gemini', 'AfterTool', {}, notes)).toBeNull();
    expect(withContext('claude', 'PreToolUse', {}, notes)).toBeNull();
    expect(withContext('claude', 'PostToolUse', { stdout: '{"decision":"block"}' }, notes)).toBeNull();
    expect(withContext('claude', 'UserPromptSubmit', { exit_code: 2 }, notes)).toBeNull();
  });
});
