import { describe, expect, it } from 'vitest';
import { roleAtLeast } from './use-role';

describe('roleAtLeast', () => {
  it('ranks viewer < operator < approver < admin, and nobody is nothing', () => {
    expect(roleAtLeast('operator', 'operator')).toBe(true);
    expect(roleAtLeast('admin', 'approver')).toBe(true);
    expect(roleAtLeast('approver', 'admin')).toBe(false);
    expect(roleAtLeast('viewer', 'operator')).toBe(false);
    expect(roleAtLeast(null, 'viewer')).toBe(false);
  });
});
