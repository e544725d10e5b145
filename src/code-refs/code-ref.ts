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
