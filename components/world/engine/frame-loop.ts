/**
 * Render on demand: a frame is drawn only when something asks for one (a camera move, new
 * sessions, a walker, an animation in view). A still village draws nothing, so the page's CPU
 * stays near idle; slow animations ask for their next frame with a delay instead of spinning.
 */

/** A gap longer than this between frames means the loop slept: the first step after it is one frame. */
const SLEPT_MS = 250;
/** The step used for the first frame after sleeping. */
const FIRST_STEP_MS = 16;

export class FrameLoop {
  private raf = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Infinity;
  private last = -1;
  private stopped = false;
  /** Frames drawn so far (the debug API reports it: a still village should not count up). */
  frames = 0;

  /** `frame(dt, slept)` draws one frame; slept = the loop was idle before this frame. */
  constructor(private readonly frame: (dt: number, now: number, sleptMs: number) => void) {}

  /** Asks for a frame as soon as the browser can draw one. */
  request(): void {
    if (this.stopped || this.raf) return;
    this.raf = requestAnimationFrame(this.run);
  }

  /** Asks for a frame in `ms` (the earliest of several such asks wins). */
  requestIn(ms: number): void {
    if (this.stopped) return;
    const at = performance.now() + Math.max(0, ms);
    if (this.timer && at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.request();
    }, Math.max(0, ms));
  }

  private readonly run = (now: number) => {
    this.raf = 0;
    const gap = this.last < 0 ? FIRST_STEP_MS : now - this.last;
    this.last = now;
    const slept = gap > SLEPT_MS ? gap : 0;
    this.frames++;
    this.frame(slept ? FIRST_STEP_MS : gap, now, slept);
  };

  stop(): void {
    this.stopped = true;
    if (this.raf) cancelAnimationFrame(this.raf);
    if (this.timer) clearTimeout(this.timer);
    this.raf = 0;
    this.timer = null;
  }
}
