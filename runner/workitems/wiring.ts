import type { QuestStepUpdate } from '../../protocol';
import type { BlueprintCatalog } from '../blueprints/catalog';
import type { HookServer } from '../hooks';
import type { Logger } from '../log';
import type { SandboxSupport } from '../sandbox';
import type { WorkspaceManager } from '../workspace/workspace-manager';
import { agentCommandsFromEnv } from './config';
import { WorkItemService } from './service';

/** The runner's work-item service, with agent commands from AGENT_RUNNER_WORKITEM_AGENTS (a bad value stops start-up with its reason). */
export function createWorkItemService(deps: {
  workspaces: WorkspaceManager;
  publish: (u: QuestStepUpdate) => void;
  log: Logger;
  dataDir: string;
  canReach?: (source: string) => boolean;
  sandbox?: SandboxSupport;
  hooks?: HookServer;
  blueprints?: BlueprintCatalog;
  capacity?: number;
}): WorkItemService {
  const agents = agentCommandsFromEnv(process.env.AGENT_RUNNER_WORKITEM_AGENTS);
  if (!agents.ok) throw new Error(agents.message);
  return new WorkItemService({ ...deps, agentCommands: agents.commands });
}
