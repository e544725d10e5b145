/** Small key/value store for instance-wide secrets such as the admin token hash. */
export interface SettingsTable {
  key: string;
  value: string;
  created_at: string;
}
