export interface ProjectsTable {
  id: string;
  key: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface EnvironmentsTable {
  id: string;
  project_id: string;
  key: string;
  name: string;
  created_at: string;
  updated_at: string;
  /** 0/1: direct writes refused, changes go through change requests (issue 24). */
  protected: number;
  /** Approvals a change request needs while the environment is protected. */
  required_approvals: number;
}
