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
}
