'use client';
import type { Terminal as XTerm } from '@xterm/xterm';
import { DEFAULT_TERMINAL_SCROLLBACK } from '../../protocol';

export const TERMINAL_THEME = {
  background: '#14161b',
  foreground: '#e6e1d6',
  cursor: '#f2b84b',
  selectionBackground: '#3b4252',
};

/** GL renderers that run on the CPU: xterm's WebGL renderer on them is many times slower than its DOM one. */
const SOFTWARE_GL = /swiftshader|llvmpipe|softpipe|software|basic render|mesa offscreen/i;

/** True when the browser renders WebGL on a real GPU (xterm's WebGL renderer then beats the DOM one). */
export function hasHardwareGpu(): boolean {
  try {
    const canvas = document.createElement('canvas');
    const gl = canvas.getContext('webgl2');
    if (!gl) return false;
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const renderer = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    return !SOFTWARE_GL.test(renderer);
  } catch {
    return false;
  }
}

/** A terminal with the house look, opened in `host`; WebGL only on a hardware GPU, else the DOM renderer. */
export async function openTerminal(host: HTMLElement): Promise<{ term: XTerm; fit: () => void }> {
  const [{ Terminal }, { FitAddon }] = await Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit')]);
  const term = new Terminal({
    fontFamily: '"DejaVu Sans Mono", "Cascadia Mono", Menlo, Consolas, monospace',
    fontSize: 13,
    // A blinking cursor is a CSS animation in xterm's DOM renderer that Chromium services every
    // frame: 60 main-thread frames a second for as long as the terminal is open and focused
    // (~20–40 ms a second of the page's main thread at rest). Steady, as VS Code's terminal is by default.
    cursorBlink: false,
    scrollback: DEFAULT_TERMINAL_SCROLLBACK,
    theme: TERMINAL_THEME,
    disableStdin: true,
  });
  const fitAddon = new FitAddon();
  term.loadAddon(fitAddon);
  term.open(host);
  fitAddon.fit();
  if (hasHardwareGpu()) {
    void import('@xterm/addon-webgl')
      .then(({ WebglAddon }) => {
        const webgl = new WebglAddon();
        // A lost GPU context falls back to the DOM renderer instead of a blank terminal.
        webgl.onContextLoss(() => webgl.dispose());
        term.loadAddon(webgl);
      })
      .catch((err) => console.warn('xterm WebGL renderer unavailable, using the DOM renderer', err));
  }
  return { term, fit: () => fitAddon.fit() };
}
