'use client';
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { ProviderId, UsageReport } from '../../protocol';

/** Provider colours, from the palette of app/globals.css. */
export const PROVIDER_COLORS: Record<ProviderId, string> = { shell: '#6fb3d2', claude: '#f2b84b', codex: '#7bc47f', gemini: '#c88fd8' };
const PATROL_COLOR = '#e8a33d';
const AXIS = { stroke: '#9a968c', fontSize: 11, fontFamily: 'DejaVu Sans Mono, monospace' };
const TOOLTIP = {
  contentStyle: { background: '#1f2229', border: '2px solid #3a3f4b', borderRadius: 0, fontFamily: 'DejaVu Sans Mono, monospace', fontSize: 12 },
  labelStyle: { color: '#e6e1d6' },
  cursor: { fill: '#ffffff10' },
};
const CHART_HEIGHT = 220;

/**
 * Charts for the usage page (recharts: SVG, and its accessibility layer lets a keyboard user
 * tab into a chart and move through the points with the arrow keys). No animation: the figures
 * are what matters, and tests read them at once. Every chart has a table beside it.
 */
export function AgentMinutesChart({ report }: { report: UsageReport }) {
  const data = report.daily.map((d) => ({ day: d.day.slice(8), ...d.agent_minutes }));
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
      <BarChart data={data} accessibilityLayer title="Agent-minutes per day, by provider" margin={{ top: 8, right: 8, bottom: 0, left: -12 }}>
        <CartesianGrid stroke="#3a3f4b" strokeDasharray="2 4" vertical={false} />
        <XAxis dataKey="day" tick={AXIS} stroke="#3a3f4b" interval="preserveStartEnd" />
        <YAxis tick={AXIS} stroke="#3a3f4b" allowDecimals />
        <Tooltip {...TOOLTIP} formatter={(v) => `${v} min`} labelFormatter={(l) => `${report.period}-${l}`} />
        <Legend wrapperStyle={{ fontFamily: 'DejaVu Sans Mono, monospace', fontSize: 12 }} />
        {report.providers.map((p) => (
          <Bar key={p} dataKey={p} name={p} stackId="agent" fill={PROVIDER_COLORS[p]} isAnimationActive={false} shapeRendering="crispEdges" />
        ))}
      </BarChart>
    </ResponsiveContainer>
  );
}

export function ConcurrencyChart({ report }: { report: UsageReport }) {
  const data = report.concurrency.map((c) => ({ ...c, label: new Date(c.t).toISOString().slice(5, 13).replace('T', ' ') + 'h' }));
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
      <LineChart data={data} accessibilityLayer title="Concurrency per hour: peak and average" margin={{ top: 8, right: 8, bottom: 0, left: -12 }}>
        <CartesianGrid stroke="#3a3f4b" strokeDasharray="2 4" vertical={false} />
        <XAxis dataKey="label" tick={AXIS} stroke="#3a3f4b" minTickGap={24} />
        <YAxis tick={AXIS} stroke="#3a3f4b" allowDecimals={false} />
        <Tooltip {...TOOLTIP} />
        <Legend wrapperStyle={{ fontFamily: 'DejaVu Sans Mono, monospace', fontSize: 12 }} />
        <Line type="stepAfter" dataKey="peak" name="peak" stroke="#e06c5f" strokeWidth={2} dot={false} isAnimationActive={false} />
        <Line type="stepAfter" dataKey="average" name="average" stroke="#6fb3d2" strokeWidth={2} dot={false} isAnimationActive={false} />
      </LineChart>
    </ResponsiveContainer>
  );
}

export function PatrolChart({ report }: { report: UsageReport }) {
  const data = report.daily.map((d) => ({ day: d.day.slice(8), patrol: d.patrol_minutes }));
  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
      <BarChart data={data} accessibilityLayer title="Patrol minutes per day" margin={{ top: 8, right: 8, bottom: 0, left: -12 }}>
        <CartesianGrid stroke="#3a3f4b" strokeDasharray="2 4" vertical={false} />
        <XAxis dataKey="day" tick={AXIS} stroke="#3a3f4b" interval="preserveStartEnd" />
        <YAxis tick={AXIS} stroke="#3a3f4b" />
        <Tooltip {...TOOLTIP} formatter={(v) => `${v} min`} labelFormatter={(l) => `${report.period}-${l}`} />
        <Bar dataKey="patrol" name="patrol minutes" fill={PATROL_COLOR} isAnimationActive={false} shapeRendering="crispEdges" />
      </BarChart>
    </ResponsiveContainer>
  );
}
