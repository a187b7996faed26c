import { listLamps } from './handlers/lamps.js';

export function route(req, res) {
  if (req.method === 'GET' && req.url === '/lamps') return listLamps(req, res);
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: 'not found' }));
}
