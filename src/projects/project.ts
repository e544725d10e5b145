/** A project owns environments, flags and API keys; its `key` is what clients send as x-project-key. */
export interface Project {
  id: string;
  key: string;
  name: string;
  createdAt: string;
  environments: Environment[];
}

/** An environment's `key` is what clients send as x-environment-key. */
export interface Environment {
  id: string;
  projectId: string;
  key: string;
  name: string;
  createdAt: string;
  /** Direct writes are refused; changes go through change requests (issue 24). */
  protected: boolean;
  /** Approvals a change request needs while the environment is protected (at least 1). */
  requiredApprovals: number;
}

/** What an environment's PATCH changes; absent keeps. */
export interface EnvironmentValues {
  name?: string;
  protected?: boolean;
  requiredApprovals?: number;
}

/** Approvals a change request of this environment needs now: none unless it is protected. */
export const approvalsNeeded = (e: Environment): number => (e.protected ? e.requiredApprovals : 0);

/** Every new project starts with these environments (contract, Admin API). */
export const DEFAULT_ENVIRONMENTS = ['development', 'staging', 'production'] as const;

export const projectView = (p: Project) => ({
  key: p.key,
  name: p.name,
  createdAt: p.createdAt,
  environments: p.environments.map(environmentView),
});

export const environmentView = (e: Environment) => ({
  key: e.key,
  name: e.name,
  createdAt: e.createdAt,
  protected: e.protected,
  requiredApprovals: e.requiredApprovals,
});
