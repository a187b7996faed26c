/**
 * The anchored rules' part of the scan (rules with Rule.anchors): asked only in the windows before
 * their anchors and, near the end of the text, where a window of an anchor still to come may start.
 */
import * as C from './chars';
// Bound once: under a CommonJS transform (tsx) every use of an imported name is a getter call.
const { MORE, YES } = C;
import type { AnchoredRule } from './compiled';
import type { Found } from './rule';
import type { Mask } from './scan';

/** Index of the first break at or after `from` (breaks ascending). */
export function firstAtOrAfter(breaks: readonly number[], from: number): number {
  let lo = 0;
  let hi = breaks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (breaks[mid] < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** What the anchored rules leave undecided: scan() passes one in and reads it back (nothing allocated per push). */
export interface Undecided {
  /** The lowest index a still-undecided match could mask. */
  hold: number;
  /** The lowest index at which a rule was still undecided. */
  undecided: number;
}

const POSITIONS_START = 64;
/** 256 K positions (1 MB): more than a 120 KB batch of one-character lines has anchors. */
const POSITIONS_KEEP = 256 * 1024;

/**
 * A list of text positions whose storage outlives the scan: anchor hits are one per line on some
 * output (`\n` is an anchor), and a plain array emptied with `length = 0` gives its storage back,
 * so every push grew it again from nothing (issue 17: ~2 MB of garbage per MB of numbered lines).
 */
export class Positions {
  at = new Int32Array(POSITIONS_START);
  length = 0;

  push(x: number): void {
    if (this.length === this.at.length) {
      const grown = new Int32Array(this.at.length * 2);
      grown.set(this.at);
      this.at = grown;
    }
    this.at[this.length++] = x;
  }

  /** Emptied for the next scan; storage grown past POSITIONS_KEEP (one huge whole-text scan) is let go. */
  clear(): void {
    this.length = 0;
    if (this.at.length > POSITIONS_KEEP) this.at = new Int32Array(POSITIONS_START);
  }

  sort(): void {
    this.at.subarray(0, this.length).sort();
  }
}

/** Positions to ask, gathered from several anchors' windows (reused: a scan is never re-entered). */
const positions = new Positions();

/**
 * Asks one anchored rule where it may answer anything but NO: in the window before each of its
 * anchors found in the text (`hits`, by anchor id), and near the end where the window of an anchor
 * still to come may start. Each position in [from, to) is asked once and in ascending order (the
 * windows of one anchor come in order; those of several anchors are merged).
 */
export function scanAnchored(
  s: string,
  from: number,
  to: number,
  final: boolean,
  ar: AnchoredRule,
  breaks: readonly number[],
  f: Found,
  masks: Mask[],
  hits: readonly Positions[],
  u: Undecided,
): void {
  const n = s.length;
  const tail = Math.max(from, n - ar.reach, pendingFrom(s, ar));
  // Windows end where the tail starts, and nothing at or after `to` is asked.
  const windowsEnd = Math.min(tail, to);
  const end = Math.min(n, to);
  const ids = ar.anchorIds;
  let found = 0;
  for (let k = 0; k < ids.length; k++) if (hits[ids[k]].length > 0) found++;
  if (found === 0 || ids.length === 1) {
    // One anchor's windows come in ascending order and end where the tail starts: ask as they come.
    if (found > 0) windows(s, from, windowsEnd, ar, 0, hits[ids[0]], breaks, final, f, masks, u, null);
    startsIn(s, tail, end, ar, breaks, final, f, masks, u, null);
    return;
  }
  positions.clear();
  for (let k = 0; k < ids.length; k++) windows(s, from, windowsEnd, ar, k, hits[ids[k]], breaks, final, f, masks, u, positions);
  startsIn(s, tail, end, ar, breaks, final, f, masks, u, positions);
  positions.sort();
  const at = positions.at;
  let last = -1;
  for (let k = 0; k < positions.length; k++) {
    const i = at[k];
    if (i !== last) ask(s, i, final, ar, f, masks, u);
    last = i;
  }
}

/** The rule's answer at i, recorded: a mask, or what it leaves undecided. */
function ask(s: string, i: number, final: boolean, ar: AnchoredRule, f: Found, masks: Mask[], u: Undecided): void {
  const a = ar.rule.match(s, i, final, f);
  if (a === YES) {
    if (f.end > f.start) masks.push({ start: f.start, end: f.end, rule: ar.rule.name, at: i, rank: ar.rank });
  } else if (a === MORE) {
    if (f.holdFrom < u.hold) u.hold = f.holdFrom;
    if (i < u.undecided) u.undecided = i;
  }
}

/**
 * The windows before anchor k's hits (ascending), cut at `tail`: asked at once (`into` null) or
 * gathered into `into`.
 */
function windows(
  s: string,
  from: number,
  tail: number,
  ar: AnchoredRule,
  k: number,
  list: Positions,
  breaks: readonly number[],
  final: boolean,
  f: Found,
  masks: Mask[],
  u: Undecided,
  into: Positions | null,
): void {
  const n = s.length;
  const a = ar.anchors[k];
  const suffixes = ar.suffixesByLast[k];
  // The anchor's fields read once, and its `over` run walked on the table itself: this walk was the
  // redactor's largest cost on numbered lines (issue 17), where every line break is the table
  // rule's anchor and its run goes on over the next line's digits.
  const { self, back, gap, next } = a;
  const textLength = a.text.length;
  const gapMax = a.gapMax ?? 0;
  const over = a.over!.table;
  const overHigh = a.over!.high;
  const hitAt = list.at;
  // No character in the text a run can end a suffix with: every hit's run is too long or ends
  // without one, but where the run may reach the end of the text (still unknown). Numbered lines
  // are such text: the walk over each line's digits was most of a flood's redaction (issue 17).
  const noEnder = suffixes !== null && self && !hasAny(s, from, ar.enders[k]!);
  let hw = from;
  for (let x = 0; x < list.length; x++) {
    const h = hitAt[x];
    let lo: number;
    let hi: number;
    if (next !== undefined && h + textLength < n && !next.has(s.charCodeAt(h + textLength))) continue;
    if (self) {
      lo = h;
      hi = h + 1;
      if (suffixes !== null) {
        // The run from the anchor must end with a suffix (unknown when it reaches the end).
        const stop = Math.min(n, h + back! + 1);
        if (noEnder && stop < n) continue;
        let e = h;
        while (e < stop) {
          const c = s.charCodeAt(e);
          if (c < 128 ? over[c] === 0 : !overHigh) break;
          e++;
        }
        if (e < n && (e - h > back! || !endsWithAny(s, h, e, suffixes))) continue;
      }
    } else {
      hi = h;
      if (gap) {
        const stop = Math.max(from, h - gapMax);
        while (hi > stop && gap.has(s.charCodeAt(hi - 1))) hi--;
      }
      if (suffixes !== null && !endsWithAny(s, Math.max(from, hi - back!), hi, suffixes)) continue;
      lo = hi;
      const stop = Math.max(from, hi - back!);
      while (lo > stop) {
        const c = s.charCodeAt(lo - 1);
        if (c < 128 ? over[c] === 0 : !overHigh) break;
        lo--;
      }
    }
    if (lo < hw) lo = hw;
    if (hi > tail) hi = tail;
    if (lo < hi) {
      startsIn(s, lo, hi, ar, breaks, final, f, masks, u, into);
      hw = hi;
    }
  }
}

/**
 * The lowest position where a match still waiting for its anchor may start: its anchor is not
 * in the text yet, or only its first characters are, at the very end. Such a match starts in the
 * anchor's window, and everything from its start to the end of the text is what a window holds
 * (gap and `over` characters, at most gapMax + back of them), so it starts at or after the place
 * found by walking back over those from where the anchor may begin. Before it, every position
 * that may answer anything but NO lies in the window of an anchor already in the text. (Asking
 * the whole reach on every push made a 4 KB push cost several times its share of a 64 KB one.)
 */
function pendingFrom(s: string, ar: AnchoredRule): number {
  const n = s.length;
  let lo = n;
  for (let k = 0; k < ar.anchors.length; k++) {
    const a = ar.anchors[k];
    // The anchor begins at h: at the end (none of it here yet), or earlier if s[h, n) is its start.
    let h = Math.max(0, n - a.text.length + 1);
    while (h < n && !endIsStartOf(s, h, a.text)) h++;
    if (a.self) {
      if (h < lo) lo = h;
      continue;
    }
    const { table, high } = ar.windowChars[k];
    let j = h;
    const stop = Math.max(0, h - (a.gapMax ?? 0) - a.back!);
    while (j > stop) {
      const c = s.charCodeAt(j - 1);
      if (c < 128 ? table[c] === 0 : !high) break;
      j--;
    }
    if (j < lo) lo = j;
  }
  return lo;
}

/** Whether s[h, end) is the start of `text`. */
function endIsStartOf(s: string, h: number, text: string): boolean {
  for (let k = 0; h + k < s.length; k++) if (s.charCodeAt(h + k) !== text.charCodeAt(k)) return false;
  return true;
}

/** Whether s[from, n) has one of `chars` (one-character strings): one memchr-speed search each. */
function hasAny(s: string, from: number, chars: readonly string[]): boolean {
  for (let k = 0; k < chars.length; k++) if (s.indexOf(chars[k], from) >= 0) return true;
  return false;
}

/** Whether s[from, to) ends with one of an anchor's lower-case suffixes (`byLast`: them by last character), ASCII letters read in either case. */
function endsWithAny(s: string, from: number, to: number, byLast: ReadonlyArray<readonly string[]>): boolean {
  if (to <= from) return false;
  const last = s.charCodeAt(to - 1) | 32;
  const candidates = last < 128 ? byLast[last] : undefined;
  if (candidates === undefined) return false;
  // Indexed, not for-of: an iterator object per call was ~40 bytes per line of numbered output.
  for (let c = 0; c < candidates.length; c++) {
    const x = candidates[c];
    const len = x.length;
    if (to - from < len) continue;
    let k = 2;
    for (; k <= len; k++) {
      let code = s.charCodeAt(to - k);
      if (code >= 65 && code <= 90) code |= 32;
      if (code !== x.charCodeAt(len - k)) break;
    }
    if (k > len) return true;
  }
  return false;
}

/**
 * The positions in [lo, hi) where the reference would ask this rule: its `first` fits and
 * `notAfter` allows the character before (after an escape sequence, anything is allowed). Asked at
 * once, or gathered into `into`.
 */
function startsIn(
  s: string,
  lo: number,
  hi: number,
  ar: AnchoredRule,
  breaks: readonly number[],
  final: boolean,
  f: Found,
  masks: Mask[],
  u: Undecided,
  into: Positions | null,
): void {
  const first = ar.first;
  const na = ar.rule.notAfter;
  let bk = -1;
  for (let i = lo; i < hi; i++) {
    const code = s.charCodeAt(i);
    if (code >= 128 || first[code] === 0) continue;
    if (na !== null && i > 0 && na.has(s.charCodeAt(i - 1))) {
      if (bk < 0) bk = firstAtOrAfter(breaks, i);
      while (bk < breaks.length && breaks[bk] < i) bk++;
      if (bk >= breaks.length || breaks[bk] !== i) continue;
    }
    if (into === null) ask(s, i, final, ar, f, masks, u);
    else into.push(i);
  }
}
