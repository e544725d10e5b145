/** A project as identity needs it: its id (what roles name), key (what routes name) and name. */
export interface ProjectEntry {
  id: string;
  key: string;
  name: string;
}

/**
 * The projects, as identity reads them (a port owned by identity, which imports no capability; compose
 * passes the ProjectService).
 */
export interface ProjectDirectory {
  findProject(projectKey: string): Promise<ProjectEntry | undefined>;
  listProjects(): Promise<ProjectEntry[]>;
}

/** The forms, as identity reads them: the project a form belongs to (null: the whole instance's). */
export interface FormDirectory {
  find(formKey: string): Promise<{ projectId: string | null } | undefined>;
}
