/** Limits of one submission (contract D16), from the deployment's configuration. */
export interface SubmissionLimits {
  maxFileBytes: number;
  maxFiles: number;
  maxFields: number;
  maxFieldBytes: number;
  /** Multipart submissions read and stored at the same time; more wait their turn (UploadGate). */
  maxConcurrentUploads: number;
  /** Longest time one multipart body may take to arrive once its upload slot is granted, in ms. */
  uploadTimeoutMs: number;
  /** Multipart submissions one client address may have under way at once. */
  maxUploadsPerClient: number;
  /** All text of one submission together (names and values), in bytes, on every encoding. */
  maxTextBytes: number;
}

/** Sizes in the intake's refusals, as the specification writes them ("1.00MB", "512.00KB"). */
export const formatMegabytes = (bytes: number): string => `${(bytes / 1048576).toFixed(2)}MB`;
export const formatSize = (bytes: number): string => (bytes >= 1048576 ? formatMegabytes(bytes) : `${(bytes / 1024).toFixed(2)}KB`);
