export interface FlagdSyncTokensTable {
  environment_id: string;
  token_hash: string;
  token_prefix: string;
  created_at: string;
}
