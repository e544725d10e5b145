export interface CodeReferenceRow {
  filePath: string;
  lineNumber: number;
  lineContent: string;
}

/** The body of POST /v1/flags/code-refs, after schema validation. */
export interface CodeReferenceUpload {
  branch: string;
  projectName: string;
  repositoryUrl?: string;
  references: Record<string, CodeReferenceRow[]>;
}

export interface StoredCodeReference extends CodeReferenceRow {
  slug: string;
  projectName: string;
  branch: string;
  repositoryUrl: string | null;
  updatedAt: string;
}

export interface CodeReferenceFilter {
  slug?: string;
  branch?: string;
  projectName?: string;
}

/**
 * What an upload replaces: `slugs` (contract D12, the default) or the whole (projectName, branch) when
 * the request says `x-flagpost-scope: branch` (ADR 0019).
 */
export type UploadScope = 'slugs' | 'branch';

/** A slug that a whole-branch upload no longer reported. */
export interface CodeReferenceRemoval {
  slug: string;
  projectName: string;
  branch: string;
  removedAt: string;
  referenceCount: number;
  lastReferences: CodeReferenceRow[];
}
