import fs from 'node:fs';
import type { ValidateFunction } from 'ajv';
import type { Blueprint, BlueprintProblem } from '../../protocol';
import { errorMessage, type Logger } from '../log';
import { compileSchema, createAjv } from '../../common/ajv';
import { loadBlueprints } from './loader';

/** Changes to a folder arrive as bursts of events (an editor writes, renames, chmods): settle first. */
export const RELOAD_DEBOUNCE_MS = 200;
/**
 * fs.watch misses what happens to the folder itself (deleted, replaced, mounted over) and some
 * network filesystems send nothing: a cheap listing check this often catches those too.
 */
export const RESCAN_INTERVAL_MS = 5_000;

/**
 * The runner's blueprints: loaded from `--blueprints-dir` at start and again whenever the folder
 * changes. `onChange` hears only real changes (a different set of blueprints or problems).
 */
export class BlueprintCatalog {
  private current: { blueprints: Blueprint[]; problems: BlueprintProblem[] } = { blueprints: [], problems: [] };
  private signature = '';
  private validators = new Map<string, ValidateFunction>();
  private watcher: fs.FSWatcher | null = null;
  private debounce: NodeJS.Timeout | null = null;
  private rescan: NodeJS.Timeout | null = null;
  private listing = '';
  private loading: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(
    readonly dir: string,
    private readonly log: Logger,
    private readonly onChange: () => void = () => undefined,
  ) {}

  get blueprints(): Blueprint[] {
    return this.current.blueprints;
  }

  get problems(): BlueprintProblem[] {
    return this.current.problems;
  }

  get(name: string): Blueprint | undefined {
    return this.current.blueprints.find((b) => b.name === name);
  }

  /** ajv's validator for a blueprint's parameters (defaults are filled into the object it checks). */
  validator(name: string): ValidateFunction | undefined {
    return this.validators.get(name);
  }

  /** Loads once, then watches. A missing folder is created (it is ours: the default lives in the data dir). */
  async start(): Promise<void> {
    try {
      await fs.promises.mkdir(this.dir, { recursive: true });
    } catch (err) {
      this.log.warn(`cannot create the blueprints folder ${this.dir}: ${errorMessage(err)}`);
    }
    await this.reload();
    this.watch();
    this.listing = await this.listingSignature();
    this.rescan = setInterval(() => void this.checkListing(), RESCAN_INTERVAL_MS);
    this.rescan.unref();
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    this.watcher = null;
    if (this.debounce) clearTimeout(this.debounce);
    if (this.rescan) clearInterval(this.rescan);
  }

  /** Reads the folder again now (one load at a time; a change during a load loads once more after it). */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        await this.loadOnce();
      } while (this.again && !this.closed);
    })().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async loadOnce(): Promise<void> {
    let next: { blueprints: Blueprint[]; problems: BlueprintProblem[] };
    try {
      next = await loadBlueprints(this.dir);
    } catch (err) {
      // A bug in loading must not take the runner down; keep what we had.
      this.log.error(`could not load blueprints from ${this.dir}`, err);
      return;
    }
    const signature = JSON.stringify(next);
    if (signature === this.signature) return;
    const first = this.signature === '';
    this.signature = signature;
    this.current = next;
    const ajv = createAjv();
    this.validators = new Map();
    for (const b of next.blueprints) {
      const c = compileSchema(ajv, b.parameters_schema);
      if (c.ok) this.validators.set(b.name, c.validate);
    }
    for (const p of next.problems) this.log.warn(`blueprint ${p.file} skipped: ${p.reason}`);
    this.log.info(
      `${first ? 'loaded' : 'reloaded'} ${next.blueprints.length} blueprint(s) from ${this.dir}` +
        (next.blueprints.length ? `: ${next.blueprints.map((b) => b.name).join(', ')}` : '') +
        (next.problems.length ? ` (${next.problems.length} skipped)` : ''),
    );
    if (!first) {
      try {
        this.onChange();
      } catch (err) {
        this.log.error('blueprint change listener failed', err);
      }
    }
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = null;
      void this.reload();
    }, RELOAD_DEBOUNCE_MS);
    this.debounce.unref();
  }

  private watch(): void {
    if (this.closed) return;
    try {
      this.watcher = fs.watch(this.dir, { persistent: false }, () => this.schedule());
      this.watcher.on('error', (err) => {
        this.log.warn(`watching ${this.dir} failed (${errorMessage(err)}); checking it every ${RESCAN_INTERVAL_MS / 1000} s instead`);
        this.watcher?.close();
        this.watcher = null;
      });
    } catch (err) {
      this.watcher = null;
      this.log.warn(`cannot watch ${this.dir} (${errorMessage(err)}); checking it every ${RESCAN_INTERVAL_MS / 1000} s instead`);
    }
  }

  /** Names, sizes and mtimes of the folder's entries: a change means a reload (and a new watcher if it was lost). */
  private async listingSignature(): Promise<string> {
    try {
      const entries = await fs.promises.readdir(this.dir);
      const parts: string[] = [];
      for (const name of entries.sort()) {
        if (!name.endsWith('.json')) continue;
        const st = await fs.promises.stat(`${this.dir}/${name}`).catch(() => null);
        parts.push(`${name}:${st?.size ?? -1}:${st?.mtimeMs ?? -1}`);
      }
      return parts.join('|');
    } catch {
      return 'missing';
    }
  }

  private async checkListing(): Promise<void> {
    if (this.closed) return;
    const now = await this.listingSignature();
    if (now !== this.listing) {
      this.listing = now;
      if (!this.watcher && now !== 'missing') this.watch();
      void this.reload();
    }
  }
}
