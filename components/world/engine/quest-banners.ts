/**
 * Quest banners: over the building of each repository with a live quest, a banner saying the goal,
 * "step n/m" and what that step is doing, with a red mark when a step failed. Real links over the
 * canvas (like the crowd badges): a person can click one or reach it with Tab, and it opens the
 * quest on /quests. Text is HTML, so it stays crisp at every zoom. Positions follow the camera each
 * frame; the contents change only when the quests do.
 */
import type { QuestUpdated } from '../../../protocol/quests';
import { TILE, type VillageLayout } from '../layout';
import { questBanners, type QuestBanner } from '../quest-workers';
import type { Camera } from './camera';

/** Longest goal shown on a banner (the whole goal is in its title and accessible name). */
const MAX_GOAL_CHARS = 48;
/** Space between the banner's foot and the building's top wall, CSS px. */
const BANNER_LIFT = 6;
/** Least space between a banner and the view's side, CSS px. */
const EDGE_GAP = 4;

export class QuestBanners {
  private readonly root: HTMLDivElement;
  private readonly els = new Map<string, HTMLAnchorElement>();
  private banners = new Map<string, QuestBanner>();
  private layout: VillageLayout | null = null;

  constructor(host: HTMLElement) {
    this.root = document.createElement('div');
    this.root.className = 'village-quests';
    Object.assign(this.root.style, { position: 'absolute', inset: '0', pointerEvents: 'none', overflow: 'hidden' });
    host.appendChild(this.root);
  }

  setLayout(layout: VillageLayout | null): void {
    this.layout = layout;
  }

  /** Builds, updates or removes one banner per repository (reusing links, so focus survives an update). */
  setQuests(quests: readonly QuestUpdated[]): void {
    this.banners = questBanners(quests);
    for (const [repoId, b] of this.banners) {
      let el = this.els.get(repoId);
      if (!el) {
        el = this.make(repoId);
        this.els.set(repoId, el);
        this.root.appendChild(el);
      }
      this.fill(el, b);
    }
    for (const [repoId, el] of this.els) {
      if (this.banners.has(repoId)) continue;
      el.remove();
      this.els.delete(repoId);
    }
  }

  private make(repoId: string): HTMLAnchorElement {
    const el = document.createElement('a');
    el.className = 'village-quest-banner';
    el.dataset.repoId = repoId;
    Object.assign(el.style, {
      position: 'absolute',
      pointerEvents: 'auto',
      maxWidth: '280px',
      padding: '2px 8px',
      background: '#2a2232',
      color: '#fbf8f0',
      border: '2px solid #f2b84b',
      boxShadow: '2px 2px 0 #0008',
      font: '12px ui-monospace, monospace',
      lineHeight: '1.35',
      textDecoration: 'none',
      whiteSpace: 'nowrap',
      transform: 'translate(-50%, -100%)',
      zIndex: '1',
    });
    // A press on the banner is a click on a link, not the start of a pan of the map under it.
    el.addEventListener('pointerdown', (e) => e.stopPropagation());
    el.addEventListener('click', (e) => e.stopPropagation());
    el.addEventListener('focus', () => (el.style.outline = '2px solid #f2b84b'));
    el.addEventListener('blur', () => (el.style.outline = ''));
    return el;
  }

  private fill(el: HTMLAnchorElement, b: QuestBanner): void {
    el.href = b.href;
    el.dataset.questId = b.questId;
    el.dataset.state = b.state;
    el.dataset.failed = String(b.failed.length > 0);
    el.style.borderColor = b.failed.length ? '#e06c5f' : '#f2b84b';
    const goal = b.goal.length > MAX_GOAL_CHARS ? `${b.goal.slice(0, MAX_GOAL_CHARS - 1)}…` : b.goal;
    const failed = b.failed.length ? `failed: ${b.failed.join(', ')}` : '';
    el.title = `Quest: ${b.goal} — ${b.progress}${failed ? ` — ${failed}` : ''}`;
    el.setAttribute('aria-label', `Quest ${b.goal}: ${b.progress}${failed ? `, ${failed}` : ''}. Open it on the quest board.`);
    const flag = document.createElement('span');
    flag.textContent = '⚑ ';
    flag.style.color = '#f2b84b';
    const head = document.createElement('div');
    head.append(flag, goal);
    const line = document.createElement('div');
    line.textContent = b.progress;
    line.style.color = b.state === 'waiting_for_approval' ? '#e8a33d' : '#6fb3d2';
    el.replaceChildren(head, line);
    if (failed) {
      // The red mark: a failed step is said in red, in words and not only by colour.
      const mark = document.createElement('div');
      mark.className = 'village-quest-failed';
      mark.textContent = `✖ ${failed}`;
      mark.style.color = '#ff8a7d';
      el.appendChild(mark);
    }
  }

  /** Keeps each banner over the middle of its building's top wall. */
  position(cam: Camera): void {
    for (const [repoId, el] of this.els) {
      const b = this.layout?.buildings.find((x) => x.repoId === repoId);
      el.hidden = !b;
      if (!b) continue;
      const p = cam.toScreen((b.x + b.w / 2) * TILE, b.y * TILE);
      // Kept inside the view, so a building at the edge still shows its whole banner.
      const half = el.offsetWidth / 2 + EDGE_GAP;
      const maxX = this.root.clientWidth - half;
      el.style.left = `${Math.round(maxX > half ? Math.min(Math.max(p.x, half), maxX) : p.x)}px`;
      el.style.top = `${Math.round(p.y - BANNER_LIFT)}px`;
    }
  }

  /** What the banner over a repository's building says (the test API's questBanner). */
  banner(repoId: string): (QuestBanner & { shown: boolean }) | null {
    const b = this.banners.get(repoId);
    if (!b) return null;
    return { ...b, shown: !this.els.get(repoId)?.hidden };
  }

  destroy(): void {
    this.root.remove();
    this.els.clear();
  }
}
