import { test } from 'node:test';
import assert from 'node:assert/strict';
import { route } from '../../src/api/routes.js';

function call(method, url) {
  return new Promise((resolve) => {
    const res = {
      writeHead(status) { this.status = status; },
      end(body) { resolve({ status: this.status, body: JSON.parse(body) }); },
    };
    route({ method, url }, res);
  });
}

test('unknown paths are 404', async () => {
  assert.equal((await call('GET', '/nope')).status, 404);
});

test('GET /lamps lists three lamps', async () => {
  const { status, body } = await call('GET', '/lamps');
  assert.equal(status, 200);
  assert.equal(body.length, 3);
});
