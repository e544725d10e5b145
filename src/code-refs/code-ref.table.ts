/** Rows are scoped by (project_id, project_name, branch, slug); an upload replaces one scope (contract D12). */
export interface CodeRefsTable {
  id: string;
  project_id: string;
  project_name: string;
  branch: string;
  repository_url: string | null;
  slug: string;
  file_path: string;
  line_number: number;
  line_content: string;
  updated_at: string;
}
