import { describe, expect, it } from 'vitest';
import { errorText } from './error-text';

describe('errorText', () => {
  it('reads an Error by its message and anything else as text', () => {
    expect(errorText(new TypeError('bad input'))).toBe('bad input');
    expect(errorText('plain words')).toBe('plain words');
    expect(errorText(42)).toBe('42');
    expect(errorText(undefined)).toBe('undefined');
  });
});
