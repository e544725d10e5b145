/** A member's role on one project (migration 0015): `viewer`, `editor` or `admin`. */
export interface ProjectRolesTable {
  user_id: string;
  project_id: string;
  role: string;
  created_at: string;
}
