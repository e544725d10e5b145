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
  /** turnstile, hcaptcha or recaptcha; null: no CAPTCHA check. */
  slack_webhook_url: string | null;
  discord_webhook_url: string | null;
  /** null: submissions are kept until deleted. */
  retention_days: number | null;
  delete_files_after_delivery: number;
  captcha_provider: string | null;
  captcha_secret: string | null;
  captcha_min_score: number | null;
  created_at: string;
  updated_at: string;
  /** The project the form belongs to (migration 0015); null: the whole instance's. */
  project_id: string | null;
  /** Issue 34 (migration 0027): e-mail and routing settings as JSON text; null: off. */
  notifications: string | null;
  auto_response: string | null;
  webhooks: string | null;
  /** Migration 0026 (issue 34), JSON text; null: off. */
  field_rules: string | null;
  file_policy: string | null;
  spam_checks: string | null;
  /** Migration 0028 (issue 34): `{"views": true}` counts page views; null: off. */
  analytics: string | null;
}

/** Views of a form per UTC day (migration 0028): a count, nothing about who viewed. */
export interface FormViewCountsTable {
  form_id: string;
  /** YYYY-MM-DD, UTC. */
  day: string;
  views: number;
}
