import fs from 'node:fs';
import path from 'node:path';
import type { Original } from './atomic-apply';
import { racyStat, readWithStat, sameStat, statFields } from './file-stat';
import { gitBlobId, realDir, sha256 } from './git-state';
import type { Proposed } from './propose';
import { discardStaged, type StagedContents } from './staged-contents';
import type { VerifierProcess } from './verifier/spawn';

/**
 * A dry-run's proposal, kept in the runner's memory for the apply that the gate allows: the apply
 * writes the recorded new contents instead of discovering and proposing again, and asks the same
 * verifier process (which parsed HEAD and the proposed files already). Only in memory: nothing a
 * session can write reaches it. An apply takes it only for the same invocation, the approved patch,
 * the same HEAD and status, and files whose bytes are those the proposal was made from.
 */
export interface KeptProposal {
  /** The invocation it answers (invocationKey). */
  key: string;
  /** The work tree's top level. */
  root: string;
  patchSha256: string;
  /** HEAD + status when it was proposed (treeFingerprint().hash). */
  fingerprint: string;
  /** What the dry-run proposed: the apply uses it as it is. */
  proposed: Proposed;
  /** The params the proposal was made with (after the adapter's prepare). */
  params: Record<string, unknown>;
  verifier: VerifierProcess | null;
  /** Its new contents written ahead (staged-contents.ts), when the caller asked for it. */
  staged?: StagedContents | null;
}

/** A gate waits for a person; a proposal older than this is proposed again (its verifier is ended). */
export const KEPT_PROPOSAL_TTL_MS = 15 * 60_000;
/** Proposals kept at once (each holds its new contents and a verifier process). */
export const KEPT_PROPOSALS_MAX = 4;

const kept = new Map<string, { p: KeptProposal; timer: NodeJS.Timeout }>();

function storeKey(key: string, patchSha256: string): string {
  return `${key}\0${patchSha256}`;
}

function drop(k: string): void {
  const e = kept.get(k);
  if (!e) return;
  clearTimeout(e.timer);
  kept.delete(k);
  e.p.verifier?.close();
  discardStaged(e.p.staged);
}

/** What makes two invocations the same proposal (mode and the approved hash aside). */
export function invocationKey(parts: { root: string; tool: string; params: unknown; globs: string[]; seed: number; maxFiles: number; allowedPaths: string[] }): string {
  return sha256(JSON.stringify([parts.root, parts.tool, parts.params, parts.globs, parts.seed, parts.maxFiles, parts.allowedPaths]));
}

export function keepProposal(p: KeptProposal): void {
  const k = storeKey(p.key, p.patchSha256);
  drop(k);
  while (kept.size >= KEPT_PROPOSALS_MAX) drop(kept.keys().next().value!);
  const timer = setTimeout(() => drop(k), KEPT_PROPOSAL_TTL_MS);
  timer.unref();
  kept.set(k, { p, timer });
}

/** Removes and returns the proposal for this invocation and approved patch, if one is kept. */
export function takeProposal(key: string, patchSha256: string): KeptProposal | null {
  const k = storeKey(key, patchSha256);
  const e = kept.get(k);
  if (!e) return null;
  clearTimeout(e.timer);
  kept.delete(k);
  return e.p;
}

/** The proposal kept for this invocation and approved patch, left kept (an apply checks its files while git reads the status). */
export function peekProposal(key: string, patchSha256: string): KeptProposal | null {
  return kept.get(storeKey(key, patchSha256))?.p ?? null;
}

export type Fit = { ok: true; originals: Map<string, Original> } | { ok: false; why: string };

/**
 * Whether the proposal still fits the tree: same HEAD and status (`fingerprint`), and its files
 * (filesStillFit). Returns each original's blob id and mode (for the apply's journal), or why it
 * does not fit.
 */
export function stillFits(p: KeptProposal, root: string, fingerprint: string): Fit {
  if (p.fingerprint !== fingerprint) return { ok: false, why: 'HEAD or the status changed since the dry-run' };
  return filesStillFit(p, root);
}

/**
 * Whether every file the proposal changes holds the bytes it was proposed from — told by its stat,
 * as the dry-run took it with the bytes (file-stat.ts), or where the stat cannot vouch (changed, or
 * racily new when it was read) by reading the file and comparing its git blob id.
 */
export function filesStillFit(p: KeptProposal, root: string): Fit {
  const originals = new Map<string, Original>();
  for (const rel of p.proposed.changed) {
    const source = p.proposed.sources.get(rel);
    if (!source) return { ok: false, why: `${rel} could not be read by the dry-run` };
    const file = path.join(root, rel);
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
      if (!sameStat(statFields(st), source.stat) || racyStat(source.stat, source.readAt)) {
        const now = readWithStat(file);
        if (gitBlobId(now.bytes) !== source.blob) return { ok: false, why: `${rel} changed since the dry-run` };
      }
    } catch {
      return { ok: false, why: `${rel} cannot be read` };
    }
    originals.set(rel, { blob: source.blob, mode: st.mode & 0o7777 });
  }
  return { ok: true, originals };
}

/** Ends what is kept for a work tree (its run was denied or failed; its worktree goes away). */
export function forgetProposals(dir: string): void {
  const root = realDir(dir); // the engine keys by the real top level
  for (const [k, e] of [...kept]) if (e.p.root === root || e.p.root.startsWith(`${root}/`)) drop(k);
}

/** The staged folders of the proposals kept now (the sweep leaves them). */
export function liveStagedDirs(): Set<string> {
  return new Set([...kept.values()].flatMap((e) => (e.p.staged ? [e.p.staged.dir] : [])));
}

/** How many proposals are kept (observability and tests). */
export function keptProposalCount(): number {
  return kept.size;
}

/** Ends every kept verifier (tests, shutdown). */
export function dropKeptProposals(): void {
  for (const k of [...kept.keys()]) drop(k);
}
