'use client';
import { useEffect, useState } from 'react';
import { ROLE_RANK } from '../../protocol';
import Header from '../ui/Header';
import { useRequireLogin } from '../ui/use-auth-redirect';
import { useWorld } from '../ui/use-world';
import NewQuestForm from './NewQuestForm';
import QuestDetail from './QuestDetail';
import { STATE_WORDS, progressLine } from './progress';
import { useQuests } from './use-quests';
import './quests.css';

/** The quest board: goal + repository + planner → the plan as a DAG → Run → live steps, gate, receipts, replay. */
export default function QuestsScreen() {
  const me = useRequireLogin();
  const world = useWorld(me.isSuccess);
  const { planners, quests } = useQuests(me.isSuccess);
  const [openId, setOpenId] = useState<string | null>(null);
  // A link such as a notification's or the village banner's (/quests?quest=<id>) opens that quest.
  useEffect(() => {
    const wanted = new URLSearchParams(window.location.search).get('quest');
    if (wanted) setOpenId(wanted);
  }, []);
  const openQuest = (id: string) => {
    setOpenId(id);
    // The address names the open quest, so it can be shared or reloaded.
    const url = new URL(window.location.href);
    url.searchParams.set('quest', id);
    window.history.replaceState(null, '', url);
  };

  if (!me.data || !world.data) return <main className="center-note">Opening the quest board…</main>;
  const canRun = ROLE_RANK[me.data.role] >= ROLE_RANK.operator;
  const canDecide = ROLE_RANK[me.data.role] >= ROLE_RANK.approver;
  const list = quests.data ?? [];
  const open = list.find((q) => q.id === openId) ?? list[0] ?? null;
  const repoName = (id: string) => world.data.repos.find((r) => r.id === id)?.name ?? 'a removed repository';

  return (
    <div className="app-shell">
      <Header me={me.data} runners={world.data.runners} />
      <main className="workshop quests">
        <div className="workshop-head">
          <h1>Quests</h1>
          <p className="muted">A goal becomes a plan of steps; each runs as an atomic work item with a receipt anyone can replay.</p>
        </div>
        <div className="workshop-grid">
          <div className="workshop-col">
            {canRun && <NewQuestForm repos={world.data.repos} planners={planners.data} onPlanned={openQuest} />}
            <section className="card" aria-labelledby="quest-list-title">
              <h2 id="quest-list-title">Quests</h2>
              {quests.isError && (
                <p className="error-line" role="alert">
                  Could not read the quests: {quests.error.message}
                </p>
              )}
              {quests.isPending && <p className="muted small">Reading the quests…</p>}
              {quests.isSuccess && list.length === 0 && <p className="muted small">No quests yet{canRun ? ': write a goal above and press Plan.' : '.'}</p>}
              <ul className="agent-list">
                {list.map((q) => (
                  <li key={q.id}>
                    <button type="button" className={`agent-button${open?.id === q.id ? ' selected' : ''}`} aria-current={open?.id === q.id ? 'true' : undefined} onClick={() => openQuest(q.id)}>
                      <span className="agent-name">{q.goal}</span>
                      <span className="small">
                        <span className={`quest-badge quest-state-${q.state}`}>{STATE_WORDS[q.state]}</span> <span className="muted">{repoName(q.repo_id)} · {progressLine(q)}</span>
                      </span>
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          </div>
          {open && <QuestDetail key={open.id} quest={open} canRun={canRun} canDecide={canDecide} />}
        </div>
      </main>
    </div>
  );
}
