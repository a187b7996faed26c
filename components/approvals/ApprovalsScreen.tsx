'use client';
import { useState } from 'react';
import Header from '../ui/Header';
import { useRequireLogin } from '../ui/use-auth-redirect';
import { useWorld } from '../ui/use-world';
import ApprovalCard from './ApprovalCard';
import PolicySuggestions from './PolicySuggestions';
import { useApprovals } from './use-approvals';
import { roleAtLeast } from '../ui/use-role';

/** The approvals inbox: pending requests first, then the history. */
export default function ApprovalsScreen() {
  const me = useRequireLogin();
  const world = useWorld(me.isSuccess);
  const approvals = useApprovals(me.isSuccess);
  const [showAll, setShowAll] = useState(false);
  if (!me.data || !world.data) return <main className="center-note">Loading approvals…</main>;
  const canDecide = roleAtLeast(me.data.role, 'approver');
  const list = approvals.data ?? [];
  const pending = list.filter((a) => a.state === 'pending');
  const done = list.filter((a) => a.state !== 'pending');
  return (
    <div className="app-shell">
      <Header me={me.data} runners={world.data.runners} />
      <main className="settings">
        <h1>Approvals</h1>
        {!canDecide && <p className="muted">You can see requests; deciding needs the approver role.</p>}
        {canDecide && <PolicySuggestions isAdmin={me.data.role === 'admin'} approvalsVersion={done.length} />}
        <h2 className="panel-title">Waiting ({pending.length})</h2>
        {pending.length === 0 ? <p className="muted">Nothing is waiting for a decision.</p> : pending.map((a) => <ApprovalCard key={a.id} approval={a} canDecide={canDecide} />)}
        <h2 className="panel-title">History</h2>
        {(showAll ? done : done.slice(0, 10)).map((a) => (
          <ApprovalCard key={a.id} approval={a} canDecide={false} />
        ))}
        {done.length > 10 && !showAll && (
          <button type="button" className="btn btn-small" onClick={() => setShowAll(true)}>
            Show all {done.length}
          </button>
        )}
      </main>
    </div>
  );
}
