/**
 * "+N" badges for rooms that hold more sprites than fit, as real buttons over the canvas: a
 * person can click one, hover it or reach it with Tab, and each lists the whole crowd (every
 * session in that room, title and status) with a button per session. The accessible session list
 * beside the village stays the full truth; this is the map's own way of saying who is hidden.
 */
import { statusText } from '../status';
import type { Camera } from './camera';
import { tileToWorld } from './actors-layer';
import type { Crowd, SimState } from './simulation';

/** Badge size (CSS px) and its offset over the slot's feet, so it sits where a figure would stand. */
const BADGE_H = 20;
const BADGE_LIFT = 14;

export function crowdLabel(c: Crowd): string {
  const room = c.roomPath === '' ? 'the hall' : c.roomPath;
  return `+${c.hidden.length} more agents in ${room}: show all ${c.all.length}`;
}

export class CrowdBadges {
  private readonly root: HTMLDivElement;
  private readonly panel: HTMLDivElement;
  private badges = new Map<string, { el: HTMLButtonElement; crowd: Crowd }>();
  private crowds: readonly Crowd[] = [];
  private sim: SimState | null = null;
  /** The crowd whose list is open, and whether it was opened by a click (stays open) or hover/focus. */
  private open: { key: string; pinned: boolean } | null = null;
  /** Set while focus returns to a badge after Escape (that focus must not reopen the list). */
  private quiet = false;

  constructor(
    host: HTMLElement,
    private readonly onSelect: (sessionId: string) => void,
  ) {
    this.root = document.createElement('div');
    this.root.className = 'village-crowds';
    Object.assign(this.root.style, { position: 'absolute', inset: '0', pointerEvents: 'none', overflow: 'hidden' });
    this.panel = document.createElement('div');
    this.panel.className = 'village-crowd-list';
    this.panel.setAttribute('role', 'dialog');
    this.panel.hidden = true;
    Object.assign(this.panel.style, {
      position: 'absolute',
      pointerEvents: 'auto',
      maxHeight: '280px',
      overflowY: 'auto',
      minWidth: '220px',
      background: '#2a2232',
      color: '#fbf8f0',
      border: '1px solid #ffd75e',
      borderRadius: '4px',
      font: '12px ui-monospace, monospace',
      padding: '4px',
      zIndex: '2',
    });
    this.panel.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') this.close(true);
    });
    this.panel.addEventListener('mouseleave', () => {
      if (this.open && !this.open.pinned) this.close(false);
    });
    host.appendChild(this.root);
    host.appendChild(this.panel);
  }

  private key(c: Crowd): string {
    return `${c.repoId}|${c.roomPath}`;
  }

  /** Shows one badge per crowd (reusing buttons, so focus survives a change in the count). */
  update(sim: SimState, cam: Camera): void {
    this.sim = sim;
    if (sim.crowds !== this.crowds) {
      this.crowds = sim.crowds;
      const keep = new Set<string>();
      for (const c of sim.crowds) {
        const key = this.key(c);
        keep.add(key);
        let b = this.badges.get(key);
        if (!b) {
          const el = this.makeBadge(key);
          b = { el, crowd: c };
          this.badges.set(key, b);
          this.root.appendChild(el);
        }
        b.crowd = c;
        b.el.textContent = `+${c.hidden.length}`;
        b.el.setAttribute('aria-label', crowdLabel(c));
        b.el.dataset.count = String(c.hidden.length);
      }
      for (const [key, b] of this.badges) {
        if (keep.has(key)) continue;
        b.el.remove();
        this.badges.delete(key);
        if (this.open?.key === key) this.close(false);
      }
      if (this.open) this.fill(this.open.key);
    }
    this.position(cam);
  }

  private makeBadge(key: string): HTMLButtonElement {
    const el = document.createElement('button');
    el.type = 'button';
    el.className = 'village-crowd-badge';
    el.dataset.crowd = key;
    el.setAttribute('aria-haspopup', 'dialog');
    el.setAttribute('aria-expanded', 'false');
    Object.assign(el.style, {
      position: 'absolute',
      pointerEvents: 'auto',
      height: `${BADGE_H}px`,
      minWidth: '28px',
      padding: '0 5px',
      borderRadius: '10px',
      border: '2px solid #2a2232',
      background: '#f1c44e',
      color: '#2a2232',
      font: 'bold 12px ui-monospace, monospace',
      cursor: 'pointer',
      transform: 'translate(-50%, -100%)',
    });
    el.addEventListener('click', (e) => {
      e.stopPropagation();
      if (this.open?.key === key && this.open.pinned) this.close(false);
      else this.show(key, true);
    });
    el.addEventListener('mouseenter', () => {
      if (!this.open?.pinned) this.show(key, false);
    });
    el.addEventListener('mouseleave', (e) => {
      if (this.open && !this.open.pinned && e.relatedTarget !== this.panel && !this.panel.contains(e.relatedTarget as Node)) this.close(false);
    });
    el.addEventListener('focus', () => {
      if (!this.quiet && !this.open?.pinned) this.show(key, false);
    });
    el.addEventListener('blur', (e) => {
      if (this.open && !this.open.pinned && !this.panel.contains(e.relatedTarget as Node)) this.close(false);
    });
    el.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') this.close(true);
    });
    return el;
  }

  private show(key: string, pinned: boolean): void {
    this.open = { key, pinned };
    for (const [k, b] of this.badges) b.el.setAttribute('aria-expanded', String(k === key));
    this.fill(key);
    this.panel.hidden = false;
    this.placePanel();
  }

  private close(refocus: boolean): void {
    const key = this.open?.key;
    this.open = null;
    this.panel.hidden = true;
    for (const b of this.badges.values()) b.el.setAttribute('aria-expanded', 'false');
    if (refocus && key) {
      // Focus goes back to the badge without opening the list again.
      this.quiet = true;
      this.badges.get(key)?.el.focus();
      this.quiet = false;
    }
  }

  /** The list: every session of the crowd, the hidden ones marked, each a button that selects it. */
  private fill(key: string): void {
    const b = this.badges.get(key);
    if (!b) return;
    const c = b.crowd;
    const hidden = new Set(c.hidden);
    this.panel.replaceChildren();
    this.panel.setAttribute('aria-label', `Agents in ${c.roomPath === '' ? 'the hall' : c.roomPath}`);
    const head = document.createElement('div');
    head.textContent = `${c.all.length} agents in ${c.roomPath === '' ? 'the hall' : c.roomPath} (${c.hidden.length} not drawn)`;
    Object.assign(head.style, { padding: '2px 4px 4px', color: '#ffd75e' });
    const list = document.createElement('ul');
    Object.assign(list.style, { listStyle: 'none', margin: '0', padding: '0' });
    for (const id of c.all) {
      const a = this.sim?.actors.get(id);
      const li = document.createElement('li');
      li.dataset.sessionId = id;
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.textContent = `${a?.title || id} · ${a ? statusText(a) : ''}${hidden.has(id) ? '' : ' (on the map)'}`;
      Object.assign(btn.style, { all: 'unset', display: 'block', width: '100%', padding: '2px 4px', cursor: 'pointer', boxSizing: 'border-box' });
      btn.addEventListener('click', () => this.onSelect(id));
      btn.addEventListener('focus', () => (btn.style.background = '#4d4358'));
      btn.addEventListener('blur', () => (btn.style.background = ''));
      li.appendChild(btn);
      list.appendChild(li);
    }
    this.panel.append(head, list);
  }

  private position(cam: Camera): void {
    for (const b of this.badges.values()) {
      const w = tileToWorld(b.crowd.at);
      const p = cam.toScreen(w.x, w.y - BADGE_LIFT * cam.spriteScale);
      b.el.style.left = `${Math.round(p.x)}px`;
      b.el.style.top = `${Math.round(p.y)}px`;
    }
    if (this.open) this.placePanel();
  }

  private placePanel(): void {
    const b = this.open ? this.badges.get(this.open.key) : undefined;
    if (!b) return;
    this.panel.style.left = `${Math.max(0, parseInt(b.el.style.left, 10) - 20)}px`;
    this.panel.style.top = `${parseInt(b.el.style.top, 10) + 6}px`;
  }

  destroy(): void {
    this.root.remove();
    this.panel.remove();
    this.badges.clear();
  }
}
