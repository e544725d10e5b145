/** One entry of the audit log (migration 0009); append-only through the API. `changes` is JSON text. */
export interface AuditLogTable {
  id: string;
  created_at: string;
  actor_type: string;
  actor_id: string | null;
  actor_label: string;
  project_id: string | null;
  entity: string;
  entity_id: string;
  environment_key: string | null;
  action: string;
  changes: string;
}
