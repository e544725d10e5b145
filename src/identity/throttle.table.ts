/** A fixed-window attempt counter (migration 0011), keyed like `account:<email>` or `address:<client key>`. */
export interface ThrottlesTable {
  key: string;
  /** Attempts counted in the window, reserved before the work they guard. */
  hits: number;
  /** ISO-8601 UTC; the count starts again at 1 after this. */
  window_ends_at: string;
}
