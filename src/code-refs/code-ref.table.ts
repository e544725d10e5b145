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

/** A slug that a whole-scope upload no longer reported (migration 0008); deleted when it comes back. */
export interface CodeRefRemovalsTable {
  id: string;
  project_id: string;
  project_name: string;
  branch: string;
  slug: string;
  removed_at: string;
  reference_count: number;
  /** JSON array of {filePath, lineNumber, lineContent}: the references last seen, at most 20. */
  last_references: string;
}
