import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDark } from '../../src/core/schedule.js';

test('midnight is dark', () => {
  assert.equal(isDark(new Date(2026, 0, 1, 0, 0)), true);
});

test('noon is light', () => {
  assert.equal(isDark(new Date(2026, 6, 1, 12, 0)), false);
});

test('a December evening is dark', () => {
  assert.equal(isDark(new Date(2026, 11, 21, 18, 0)), true);
});
