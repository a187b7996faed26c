import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLamp, light, extinguish } from '../../src/core/lamp.js';

test('a new lamp is dark', () => {
  assert.equal(createLamp('a', 'Main St').lit, false);
});

test('lighting and extinguishing', () => {
  const lamp = light(createLamp('a', 'Main St'));
  assert.equal(lamp.lit, true);
  assert.equal(extinguish(lamp).lit, false);
});

test('brightness is bounded', () => {
  assert.throws(() => createLamp('a', 'Main St', 120), RangeError);
});
