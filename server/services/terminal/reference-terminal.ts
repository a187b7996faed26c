import xtermHeadless from '@xterm/headless';
import serializeAddon from '@xterm/addon-serialize';

const { Terminal } = xtermHeadless;
const { SerializeAddon } = serializeAddon;

/** A step of a generated stream: output, a resize, or a read of `read` lines of scrollback. */
export type ReferenceStep = { write: string } | { resize: [number, number] } | { read: number };

/**
 * What the property tests compare the mirror with: a plain headless terminal fed every byte, each
 * resize and read applied once everything before it is parsed, then a full read at the end.
 * `painted`: serialised data written first (a terminal restored from a stored screen).
 */
export async function referenceReads(steps: readonly ReferenceStep[], size: { cols: number; rows: number; scrollback: number }, painted?: string): Promise<string[]> {
  const term = new Terminal({ ...size, allowProposedApi: true });
  const s = new SerializeAddon();
  term.loadAddon(s as never);
  const parsed = () => new Promise<void>((r) => term.write('', r));
  if (painted) term.write(painted);
  const reads: string[] = [];
  for (const st of steps) {
    if ('write' in st) term.write(st.write);
    else if ('resize' in st) {
      await parsed();
      term.resize(...st.resize);
    } else {
      await parsed();
      reads.push(`${term.cols}x${term.rows} ${s.serialize({ scrollback: st.read })}`);
    }
  }
  await parsed();
  reads.push(s.serialize({ scrollback: size.scrollback }));
  term.dispose();
  return reads;
}
