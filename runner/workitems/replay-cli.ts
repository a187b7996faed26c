import fs from 'node:fs';
import { replayReceipt } from './replay';

/** `replay.sh` runs this: node --import tsx replay-cli.ts RECEIPT.json <repository>. Exit 0 = verified. */
const [receiptPath, repo] = process.argv.slice(2);
if (!receiptPath || !repo) {
  process.stderr.write('usage: replay-cli.ts RECEIPT.json <git repository>\n');
  process.exit(2);
}
const result = await replayReceipt(JSON.parse(fs.readFileSync(receiptPath, 'utf8')), repo);
process.stdout.write(`${JSON.stringify(result)}\n`);
process.stdout.write(result.verified ? `Replay successful: hash verified (${result.actual_hash})\n` : `ERROR: ${result.detail}\n`);
process.exit(result.verified ? 0 : 1);
