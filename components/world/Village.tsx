'use client';

/**
 * The pixel village: every repository a building, every directory a room, every session a sprite.
 *
 * Browser only (pixi.js is imported dynamically inside an effect); host it with
 * `dynamic(() => import('…/components/world/Village'), { ssr: false })`. The parent must give the
 * component a size (it fills its parent: width and height 100%).
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { RepoSummary, SessionSummary } from '../../protocol/ui';
import type { AlertSummary, RepoHealth } from '../../protocol/patrols';
import type { RunSummary } from '../../protocol/deterministic';
import type { RadarOverlap } from '../../protocol/radar';
import { layoutVillage, unfoldKey, type VillageLayout } from './layout';
import { runAsSession } from './runs';
import { dtaRunAsSession } from './dta-workers';
import type { DtaRunSummary } from '../../protocol/dta';
import type { QuestUpdated } from '../../protocol/quests';
import { questStepsAsSessions } from './quest-workers';
import type { VillageEngine } from './engine';
import { testHooksEnabled } from './engine/test-hooks';

export interface VillageProps {
  repos: RepoSummary[];
  /** Sessions to show; COMPLETED ones walk out and disappear, FAILED ones show a red cross briefly, then leave. */
  sessions: SessionSummary[];
  selectedSessionId: string | null;
  selectedRoom: { repoId: string; roomPath: string } | null;
  /** The workshop: how many deterministic agents it has (none: no workshop) and their runs (its workers). */
  workshopAgents?: number;
  runs?: RunSummary[];
  /** DTA runs: workers with a measuring tape in the room of the files they touch (dta-workers.ts). */
  dtaRuns?: DtaRunSummary[];
  /** Quests: a banner over each live quest's building, each running step a worker in its room (quest-workers.ts). */
  quests?: QuestUpdated[];
  /** Clicking a sprite (a session id, or a run id for a worker in the workshop). */
  onSelectSession(id: string): void;
  /** Clicking a room (the deepest room under the pointer). */
  onSelectRoom(repoId: string, roomPath: string): void;
  /** Open alerts from patrols (bugs in rooms) and each building's health (bar, smoke). */
  alerts?: readonly AlertSummary[];
  health?: readonly RepoHealth[];
  selectedAlertId?: string | null;
  /** Clicking a bug. */
  onSelectAlert?(id: string): void;
  /** Conflict radar: overlapping sessions (glowing rooms, lines, badges) and its badges' hover/focus/click. */
  radar?: readonly RadarOverlap[];
  onRadar?(overlapId: string | null, how: 'hover' | 'focus' | 'click'): void;
  /** A sprite came to stand in a room (a terminal replay walks it on room by room). */
  onArrived?(sessionId: string, roomPath: string): void;
  className?: string;
}

/** A cheap signature of what the layout depends on: re-layout only when a repository or its tree changes. */
function layoutSignature(repos: readonly RepoSummary[]): string {
  const parts: string[] = [];
  for (const r of repos) {
    let h = 0x811c9dc5;
    if (r.tree) {
      for (const d of r.tree.dirs) {
        for (let i = 0; i < d.path.length; i++) h = Math.imul(h ^ d.path.charCodeAt(i), 0x01000193);
        h = Math.imul(h ^ (d.files + 0x2f), 0x01000193);
      }
    }
    parts.push(`${r.id}\u0000${r.name}\u0000${r.status}\u0000${r.tree ? `${r.tree.head_sha}:${r.tree.dirs.length}:${h >>> 0}` : '-'}`);
  }
  return parts.join('\u0001');
}

export default function Village(props: VillageProps) {
  const { repos, selectedSessionId, selectedRoom } = props;
  const agents = props.workshopAgents ?? 0;
  const sessions = useMemo(
    () => [...props.sessions, ...(props.runs ?? []).map(runAsSession), ...(props.dtaRuns ?? []).map(dtaRunAsSession), ...questStepsAsSessions(props.quests ?? [])],
    [props.sessions, props.runs, props.dtaRuns, props.quests],
  );
  const hostRef = useRef<HTMLDivElement>(null);
  const engineRef = useRef<VillageEngine | null>(null);

  // Rooms a person unfolded (clicked their "+N more" marker): their folded directories are drawn.
  const [unfolded, setUnfolded] = useState<ReadonlySet<string>>(() => new Set());
  const unfold = useCallback((repoId: string, path: string) => {
    setUnfolded((prev) => new Set(prev).add(unfoldKey(repoId, path)));
  }, []);
  const signature = useMemo(() => `${layoutSignature(repos)}\u0002${agents}\u0002${[...unfolded].sort().join('\u0003')}`, [repos, agents, unfolded]);
  // Re-layout only when the signature changes (not on every new `repos` array).
  const layoutMs = useRef(0);
  const layout: VillageLayout = useMemo(() => {
    const t0 = performance.now();
    const l = layoutVillage(
      repos.map((r) => ({ id: r.id, name: r.name, tree: r.tree })),
      agents > 0 ? { agents } : null,
      { unfolded },
    );
    layoutMs.current = performance.now() - t0;
    return l;
  }, [signature]);

  // Latest values for the engine's async start and its callbacks.
  const latest = useRef({ props, layout, sessions, unfold });
  useEffect(() => {
    latest.current = { props, layout, sessions, unfold };
  });

  useEffect(() => {
    const host = hostRef.current;
    if (!host) return;
    let cancelled = false;
    let engine: VillageEngine | null = null;
    void (async () => {
      // The page's CSP has no 'unsafe-eval' (server/http-guard.ts): pixi's shader and uniform code
      // generators are replaced by its precompiled, eval-free ones before the engine starts.
      await import('pixi.js/unsafe-eval');
      const { createVillageEngine } = await import('./engine');
      if (cancelled) return;
      const e = await createVillageEngine(host, () => ({
        onSelectSession: (id) => latest.current.props.onSelectSession(id),
        onSelectRoom: (repoId, path) => latest.current.props.onSelectRoom(repoId, path),
        onSelectAlert: (id) => latest.current.props.onSelectAlert?.(id),
        onUnfold: (repoId, path) => latest.current.unfold(repoId, path),
        onRadar: (id, how) => latest.current.props.onRadar?.(id, how),
        onArrived: (id, room) => latest.current.props.onArrived?.(id, room),
      }));
      if (cancelled) {
        e.destroy();
        return;
      }
      engine = e;
      engineRef.current = e;
      if (testHooksEnabled()) window.__village = e.debugApi;
      const { props: p, layout: l, sessions: all } = latest.current;
      e.setWorld(l, p.repos);
      e.setSessions(all);
      e.setSelection(p.selectedSessionId, p.selectedRoom);
      e.setPatrolState(p.alerts ?? [], p.health ?? []);
      e.setSelectedAlert(p.selectedAlertId ?? null);
      e.setRadar(p.radar ?? []);
      e.setQuests(p.quests ?? []);
    })().catch((err: unknown) => {
      console.error('village: could not start the renderer', err);
    });
    return () => {
      cancelled = true;
      engine?.destroy();
      if (engineRef.current === engine) engineRef.current = null;
    };
  }, []);

  useEffect(() => {
    engineRef.current?.setWorld(layout, repos);
    // How long the last layout took (read by bench/village.ts; harmless to anyone else).
    if (hostRef.current) hostRef.current.dataset.layoutMs = layoutMs.current.toFixed(1);
  }, [layout, repos]);

  useEffect(() => {
    engineRef.current?.setSessions(sessions);
  }, [sessions]);

  const { alerts, health, selectedAlertId } = props;
  useEffect(() => {
    engineRef.current?.setPatrolState(alerts ?? [], health ?? []);
  }, [alerts, health]);
  useEffect(() => {
    engineRef.current?.setSelectedAlert(selectedAlertId ?? null);
  }, [selectedAlertId]);

  const { radar } = props;
  useEffect(() => {
    engineRef.current?.setRadar(radar ?? []);
  }, [radar]);

  const { quests } = props;
  useEffect(() => {
    engineRef.current?.setQuests(quests ?? []);
  }, [quests]);

  const roomRepo = selectedRoom?.repoId;
  const roomPath = selectedRoom?.roomPath;
  useEffect(() => {
    engineRef.current?.setSelection(selectedSessionId, roomRepo !== undefined && roomPath !== undefined ? { repoId: roomRepo, roomPath } : null);
  }, [selectedSessionId, roomRepo, roomPath]);

  const live = props.sessions.filter((s) => s.state !== 'COMPLETED' && s.state !== 'FAILED').length;
  const working = (props.runs ?? []).filter((r) => r.status === 'queued' || r.status === 'running').length;
  const bugCount = (alerts ?? []).filter((a) => a.state === 'open').length;
  const label =
    `Village map: ${repos.length} ${repos.length === 1 ? 'repository' : 'repositories'} as buildings, ` +
    `${live} active ${live === 1 ? 'agent' : 'agents'}, ${bugCount} ${bugCount === 1 ? 'alert' : 'alerts'} from patrols` +
    (agents > 0 ? `, a workshop with ${agents} deterministic ${agents === 1 ? 'agent' : 'agents'} and ${working} ${working === 1 ? 'run' : 'runs'} in progress` : '') +
    `. Drag or use the arrow keys to pan, ` +
    `mouse wheel or + and - to zoom, 0 to fit.`;

  return (
    <div
      ref={hostRef}
      className={props.className}
      tabIndex={0}
      role="application"
      aria-label={label}
      aria-roledescription="village map"
      data-testid="village"
      style={{ position: 'relative', width: '100%', height: '100%', minHeight: 240, overflow: 'hidden', outline: 'none' }}
    />
  );
}
