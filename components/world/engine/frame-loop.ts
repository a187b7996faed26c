/**
 * Render on demand: a frame is drawn only when something asks for one (a camera move, new
 * sessions, a walker, an animation in view). A still village draws nothing, so the page's CPU
 * stays near idle; slow animations ask for their next frame with a delay instead of spinning.
 */

/** The step used for the first frame after sleeping (the time asleep is reported separately). */
const FIRST_STEP_MS = 16;

export class FrameLoop {
  private raf = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Infinity;
  private last = -1;
  private stopped = false;
  /** Whether the frame being drawn asked for the next one (then the gap is real frame time, not sleep). */
  private inFrame = false;
  private continuous = false;
  /** Frames drawn so far (the debug API reports it: a still village should not count up). */
  frames = 0;

  /** `frame(dt, slept)` draws one frame; slept = the loop was idle before this frame. */
  constructor(private readonly frame: (dt: number, now: number, sleptMs: number) => void) {}

  /** Whether no frame is asked for (neither the next one nor a later one): the village rests. */
  get asleep(): boolean {
    return !this.raf && !this.timer;
  }

  /** Asks for a frame as soon as the browser can draw one. */
  request(): void {
    if (this.inFrame) this.continuous = true;
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
    // A slow renderer's frames are still one continuous walk (real time passes); only a loop
    // that stopped asking for frames slept.
    const slept = this.continuous ? 0 : gap;
    this.continuous = false;
    this.frames++;
    this.inFrame = true;
    try {
      this.frame(slept ? FIRST_STEP_MS : gap, now, slept);
    } finally {
      this.inFrame = false;
    }
  };

  stop(): void {
    this.stopped = true;
    if (this.raf) cancelAnimationFrame(this.raf);
    if (this.timer) clearTimeout(this.timer);
    this.raf = 0;
    this.timer = null;
  }
}
