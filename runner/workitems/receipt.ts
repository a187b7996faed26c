import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { blake3Hex } from '../../common/canonical';
import { QUEST_LIMITS, type Receipt } from '../../protocol';

/**
 * RECEIPT.json and its replay script. The script needs this repository's runner code (it runs
 * replay-cli.ts through tsx) and a git repository that has the receipt's before-commit.
 */

export const RECEIPT_FILE = 'RECEIPT.json';
export const REPLAY_SCRIPT = 'replay.sh';

export function newReceiptId(): string {
  return crypto.randomUUID();
}

export function patchHash(patch: string): string {
  return blake3Hex(patch);
}

export function fitsInReceipt(patch: string): boolean {
  return patch.length <= QUEST_LIMITS.MAX_PATCH_CHARS;
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** Writes RECEIPT.json and replay.sh into dir; returns their paths. */
export function writeReceipt(dir: string, receipt: Receipt): { receiptPath: string; scriptPath: string } {
  fs.mkdirSync(dir, { recursive: true });
  const receiptPath = path.join(dir, RECEIPT_FILE);
  fs.writeFileSync(receiptPath, `${JSON.stringify(receipt, null, 2)}\n`);
  const cli = fileURLToPath(new URL('./replay-cli.ts', import.meta.url));
  const tsx = fileURLToPath(import.meta.resolve('tsx'));
  const how = receipt.replay === 'rerun' ? 're-runs the deterministic step' : 're-applies the recorded patch';
  const script = `#!/usr/bin/env bash
# Replays work item ${receipt.work_item.id} (${receipt.work_item.skill}): ${how} on a fresh
# worktree at ${receipt.before_commit} and compares the state's BLAKE3 hash with ${receipt.after_hash}.
# Usage: replay.sh <git repository that has the before-commit>
set -euo pipefail
REPO="\${1:?usage: replay.sh <git repository>}"
exec ${shellQuote(process.execPath)} --import ${shellQuote(tsx)} ${shellQuote(cli)} ${shellQuote(receiptPath)} "$REPO"
`;
  const scriptPath = path.join(dir, REPLAY_SCRIPT);
  fs.writeFileSync(scriptPath, script, { mode: 0o755 });
  return { receiptPath, scriptPath };
}
