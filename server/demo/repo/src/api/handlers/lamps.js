import { createLamp } from '../../core/lamp.js';
import { plan } from '../../core/schedule.js';

const LAMPS = [createLamp('l1', 'Mill Lane'), createLamp('l2', 'Mill Lane', 60), createLamp('l3', 'Harbour Row')];

export function listLamps(_req, res) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(plan(LAMPS, new Date())));
}
