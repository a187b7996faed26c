import { probeSessionReach } from './session-reach';

/** Child-process entry of the reach probe: one JSON line on stdout (session-reach.ts says why). */
try {
  const report = await probeSessionReach();
  process.stdout.write(`REACH ${JSON.stringify(report)}\n`);
  process.exit(0);
} catch (err) {
  process.stderr.write(`reach probe failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
}
