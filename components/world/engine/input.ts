/**
 * Pointer, wheel and keyboard on the village: drag to pan, wheel or +/- to zoom, arrows to pan,
 * 0 to fit, click to select (sprite, bug, fold marker or room), hover for a pointer cursor and for
 * the full name of a shortened label. Turns events into calls; owns no state but the drag.
 */
import { DRAG_THRESHOLD, KEY_PAN_PX, WHEEL_STEP_PX } from './constants';

export interface InputTarget {
  panBy(dx: number, dy: number): void;
  zoomAt(sx: number, sy: number, steps: number): void;
  /** Re-fit the whole village (key 0). */
  refit(): void;
  click(sx: number, sy: number): void;
  /** What is under the pointer: a cursor and, for a shortened label, its full text. */
  hover(sx: number, sy: number): { pointer: boolean; tooltip: string | null };
  viewCenter(): { x: number; y: number };
}

export function attachInput(host: HTMLElement, canvas: HTMLCanvasElement, target: InputTarget): () => void {
  const tooltip = document.createElement('div');
  tooltip.className = 'village-tooltip';
  tooltip.setAttribute('role', 'tooltip');
  tooltip.hidden = true;
  Object.assign(tooltip.style, {
    position: 'absolute',
    pointerEvents: 'none',
    background: '#2a2232',
    color: '#fbf8f0',
    font: '12px ui-monospace, monospace',
    padding: '2px 6px',
    borderRadius: '3px',
    whiteSpace: 'nowrap',
    zIndex: '3',
  });
  host.appendChild(tooltip);

  const local = (e: { clientX: number; clientY: number }) => {
    const r = canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };
  let drag: { id: number; sx: number; sy: number; lx: number; ly: number; moved: boolean } | null = null;

  const onPointerDown = (e: PointerEvent) => {
    if (e.button !== 0 && e.pointerType === 'mouse') return;
    const p = local(e);
    drag = { id: e.pointerId, sx: p.x, sy: p.y, lx: p.x, ly: p.y, moved: false };
    try {
      canvas.setPointerCapture(e.pointerId);
    } catch {
      /* synthetic events have no capture */
    }
    host.focus({ preventScroll: true });
  };
  const onPointerMove = (e: PointerEvent) => {
    const p = local(e);
    if (drag && drag.id === e.pointerId) {
      if (!drag.moved && Math.hypot(p.x - drag.sx, p.y - drag.sy) > DRAG_THRESHOLD) {
        drag.moved = true;
        canvas.style.cursor = 'grabbing';
        tooltip.hidden = true;
      }
      if (drag.moved) target.panBy(p.x - drag.lx, p.y - drag.ly);
      drag.lx = p.x;
      drag.ly = p.y;
      return;
    }
    const h = target.hover(p.x, p.y);
    canvas.style.cursor = h.pointer ? 'pointer' : 'default';
    if (h.tooltip) {
      tooltip.textContent = h.tooltip;
      tooltip.style.left = `${Math.round(p.x + 12)}px`;
      tooltip.style.top = `${Math.round(p.y + 14)}px`;
      tooltip.hidden = false;
    } else tooltip.hidden = true;
  };
  const onPointerUp = (e: PointerEvent) => {
    if (!drag || drag.id !== e.pointerId) return;
    const d = drag;
    drag = null;
    canvas.style.cursor = 'default';
    if (!d.moved) {
      const p = local(e);
      target.click(p.x, p.y);
    }
  };
  const onPointerCancel = () => {
    drag = null;
    canvas.style.cursor = 'default';
  };
  const onPointerLeave = () => {
    tooltip.hidden = true;
  };
  let wheelAcc = 0;
  const onWheel = (e: WheelEvent) => {
    e.preventDefault();
    const dy = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaMode === 2 ? e.deltaY * 400 : e.deltaY;
    wheelAcc += dy;
    const p = local(e);
    if (Math.abs(wheelAcc) >= WHEEL_STEP_PX) {
      target.zoomAt(p.x, p.y, wheelAcc < 0 ? 1 : -1);
      wheelAcc = 0;
    }
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target !== host) return; // keys inside a crowd list belong to it
    const c = target.viewCenter();
    let handled = true;
    switch (e.key) {
      case 'ArrowLeft':
        target.panBy(KEY_PAN_PX, 0);
        break;
      case 'ArrowRight':
        target.panBy(-KEY_PAN_PX, 0);
        break;
      case 'ArrowUp':
        target.panBy(0, KEY_PAN_PX);
        break;
      case 'ArrowDown':
        target.panBy(0, -KEY_PAN_PX);
        break;
      case '+':
      case '=':
        target.zoomAt(c.x, c.y, 1);
        break;
      case '-':
      case '_':
        target.zoomAt(c.x, c.y, -1);
        break;
      case '0':
        target.refit();
        break;
      default:
        handled = false;
    }
    if (handled) e.preventDefault();
  };
  canvas.addEventListener('pointerdown', onPointerDown);
  canvas.addEventListener('pointermove', onPointerMove);
  canvas.addEventListener('pointerup', onPointerUp);
  canvas.addEventListener('pointercancel', onPointerCancel);
  canvas.addEventListener('pointerleave', onPointerLeave);
  canvas.addEventListener('wheel', onWheel, { passive: false });
  host.addEventListener('keydown', onKeyDown);
  return () => {
    canvas.removeEventListener('pointerdown', onPointerDown);
    canvas.removeEventListener('pointermove', onPointerMove);
    canvas.removeEventListener('pointerup', onPointerUp);
    canvas.removeEventListener('pointercancel', onPointerCancel);
    canvas.removeEventListener('pointerleave', onPointerLeave);
    canvas.removeEventListener('wheel', onWheel);
    host.removeEventListener('keydown', onKeyDown);
    tooltip.remove();
  };
}
