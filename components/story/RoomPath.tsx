'use client';
import { useMemo } from 'react';
import type { RepoSummary } from '../../protocol';
import { layoutVillage, roomByPath, roomFor } from '../world/layout';

/** Map scale: CSS px per tile (the village's rooms, drawn small). */
const MAP_PX_PER_TILE = 4;

/**
 * A small map of the session's building with the path its agent walked: the village layout (the
 * same pure function the village draws from) as outlines, the visited rooms filled, a line
 * through their centres in visit order.
 */
export default function RoomPath({ repo, rooms }: { repo: RepoSummary | undefined; rooms: string[] }) {
  const map = useMemo(() => {
    if (!repo?.tree) return null;
    const layout = layoutVillage([{ id: repo.id, name: repo.name, tree: repo.tree }]);
    const b = layout.buildings.find((x) => x.repoId === repo.id);
    if (!b) return null;
    const points = rooms
      .map((p) => roomByPath(layout, repo.id, p) ?? roomFor(layout, repo.id, p))
      .filter((r): r is NonNullable<typeof r> => !!r)
      .map((r) => ({ x: (r.x + r.w / 2 - b.x) * MAP_PX_PER_TILE, y: (r.y + r.h / 2 - b.y) * MAP_PX_PER_TILE, path: r.path }));
    return { b, points, visited: new Set(points.map((p) => p.path)) };
  }, [repo, rooms]);
  if (!map) return null;
  const { b, points, visited } = map;
  const S = MAP_PX_PER_TILE;
  return (
    <svg className="story-map" width={b.w * S} height={b.h * S} role="img" aria-label={`Map of ${repo?.name}: ${rooms.map((r) => r || '/').join(' → ')}`} data-testid="story-map">
      {b.rooms.map((r) => (
        <rect
          key={r.path}
          x={(r.x - b.x) * S}
          y={(r.y - b.y) * S}
          width={r.w * S}
          height={r.h * S}
          fill={visited.has(r.path) ? 'rgba(255,215,94,0.25)' : 'none'}
          stroke="#6b6f7a"
          strokeWidth={1}
        >
          <title>{r.path || '/'}</title>
        </rect>
      ))}
      <polyline points={points.map((p) => `${p.x},${p.y}`).join(' ')} fill="none" stroke="#ff6b3d" strokeWidth={2} />
      {points.map((p, i) => (
        <circle key={i} cx={p.x} cy={p.y} r={i === 0 || i === points.length - 1 ? 4 : 2.5} fill={i === points.length - 1 ? '#ff6b3d' : '#ffd75e'} />
      ))}
    </svg>
  );
}
