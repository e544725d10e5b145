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

/**
 * The forms' read-only tokens, as the admin gate asks about them (a port owned by identity; compose passes
 * the forms' FormReadTokenService): the form a token reads, or undefined for any other string.
 */
export interface FormReaders {
  /** `markUsed` records the use once the gate let the request in (a refused request changes nothing). */
  readerOf(token: string): Promise<{ formKey: string; name: string; markUsed(): Promise<void> } | undefined>;
}
