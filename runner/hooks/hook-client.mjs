// The one client both helper programs use to reach the runner's hook channel (plain Node, no
// dependencies: they run from the runner's checkout without a build step).
import http from 'node:http';

/** POST to the hook channel: its Unix socket when there is one (it works across network namespaces), else TCP. */
export function post(url, token, body, timeoutMs, socketPath) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        ...(socketPath ? { socketPath } : {}),
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** A JSON object, or null for anything else (bad JSON, arrays, scalars). */
export function parseObject(text) {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}
