import { AGENT_GATE, type AgentGateKind } from '../../protocol';
import { lastMeaningfulLine, meaningfulText, Screen } from './screen';

/**
 * Watches an agent CLI's screen for the gates its hooks cannot report (they fire only once a
 * session runs): sign-in choosers, folder-trust prompts, questions, an API it cannot reach, a
 * rejected config. Each adapter lists the patterns of its CLI (`screenRules`), read from the real
 * CLIs' first-run screens (README, "Using real agents").
 */

/** The screen is read this long after output stops, not per chunk: a TUI paints in many small writes. */
export const SCREEN_CHECK_DELAY_MS = 250;

export interface ScreenRule {
  kind: AgentGateKind;
  /** Matched against each meaningful line of the visible screen. */
  pattern: RegExp;
}

export interface ScreenGate {
  kind: AgentGateKind;
  /** What the sprite shows, e.g. "needs sign-in: codex", "waiting for your answer: Trust this folder?". */
  detail: string;
}

/** The first gate the visible screen shows (rules in order), or null. */
export function detectGate(provider: string, rules: readonly ScreenRule[], lines: readonly string[]): ScreenGate | null {
  const meaningful = lines.map(meaningfulText).filter((l): l is string => l !== null);
  for (const rule of rules) {
    // The lowest match: what was asked last (a CLI that does not clear leaves older questions above).
    const line = meaningful.findLast((l) => rule.pattern.test(l));
    if (line === undefined) continue;
    const detail = rule.kind === 'signIn' ? `${AGENT_GATE.signIn}: ${provider}` : `${AGENT_GATE[rule.kind]}: ${line}`;
    return { kind: rule.kind, detail };
  }
  return null;
}

export class ScreenWatch {
  private readonly screen: Screen;
  private timer: NodeJS.Timeout | null = null;
  private current: ScreenGate | null = null;
  private closed = false;

  constructor(
    private readonly provider: string,
    private readonly rules: readonly ScreenRule[],
    size: { cols: number; rows: number },
    /** A gate appeared (or changed), or the screen moved past it (null). */
    private readonly onGate: (gate: ScreenGate | null) => void,
    private readonly delayMs = SCREEN_CHECK_DELAY_MS,
  ) {
    this.screen = new Screen(size.cols, size.rows);
  }

  push(data: string): void {
    if (this.closed) return;
    this.screen.write(data);
    if (this.rules.length === 0 || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.check();
    }, this.delayMs);
    this.timer.unref();
  }

  resize(cols: number, rows: number): void {
    this.screen.resize(cols, rows);
  }

  get gate(): ScreenGate | null {
    return this.current;
  }

  /** Output characters never parsed because they scrolled out first (screen.ts; bench:screen-watch). */
  get skippedChars(): number {
    return this.screen.skippedChars;
  }

  private async check(): Promise<void> {
    await this.screen.settled();
    if (this.closed) return;
    const gate = detectGate(this.provider, this.rules, this.screen.visibleLines());
    if (gate?.detail === this.current?.detail) return;
    this.current = gate;
    this.onGate(gate);
  }

  /** The line to quote when the CLI ended on its own (after everything it wrote is parsed). */
  async lastLine(): Promise<string | null> {
    if (this.closed) return null;
    await this.screen.settled();
    if (this.closed) return null;
    return lastMeaningfulLine(this.screen.allLines());
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.screen.dispose();
  }
}
