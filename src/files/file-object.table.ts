/**
 * The ledger of objects in a file store that no committed file row vouches for (migration 0014): an
 * upload under way, or an object whose file row was deleted. The sweep deletes what it lists.
 */
export interface FileObjectsTable {
  object_key: string;
  /** `fs` or `s3`. */
  storage: string;
  /** `uploading` (written before the upload, removed when its file row commits) or `deleting`. */
  state: string;
  created_at: string;
  /** When a sweep took the row to delete its object; another sweep takes it again only after a lease. */
  claimed_at: string | null;
}
