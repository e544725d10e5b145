/** Forms and their settings (contract "Admin API" form settings). Lists are JSON text. */
export interface FormsTable {
  id: string;
  key: string;
  name: string;
  enabled: number;
  uploads_enabled: number;
  /** null: no honeypot field. */
  honeypot: string | null;
  websites: string | null;
  blocked_ips: string | null;
  success_url: string | null;
  error_url: string | null;
  redirect_url: string | null;
  webhook_url: string | null;
  webhook_secret: string | null;
  notify_emails: string | null;
  created_at: string;
  updated_at: string;
}

export interface SubmissionsTable {
  id: string;
  form_id: string;
  /** The submitted fields as a JSON object. */
  data: string;
  spam: number;
  ip: string | null;
  user_agent: string | null;
  referer: string | null;
  origin: string | null;
  created_at: string;
}

export interface SubmissionFilesTable {
  id: string;
  submission_id: string;
  /** Order of the file within its submission. */
  position: number;
  field: string;
  name: string;
  content_type: string;
  size: number;
  /** blob on SQLite, bytea on PostgreSQL. */
  content: Buffer;
}
