'use client';

/** The "Repository" field of the forms that start work on one repository (DTA runs, quests). */
export default function RepoSelect(props: { repos: ReadonlyArray<{ id: string; name: string }>; value: string; onChange: (id: string) => void; disabled?: boolean }) {
  return (
    <label className="block">
      Repository
      <select value={props.value} onChange={(e) => props.onChange(e.target.value)} disabled={props.disabled}>
        {props.repos.map((r) => (
          <option key={r.id} value={r.id}>
            {r.name}
          </option>
        ))}
      </select>
    </label>
  );
}
