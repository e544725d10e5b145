/** A per-form read-only token as it is listed: never its secret, which is shown once when it is made. */
export interface FormReadToken {
  id: string;
  formId: string;
  name: string;
  tokenPrefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** Every form read token starts with this, so that the admin gate knows which kind a bearer token is. */
export const FORM_READ_TOKEN_PREFIX = 'fpf_';

export const formReadTokenView = (token: FormReadToken) => ({
  id: token.id,
  name: token.name,
  tokenPrefix: token.tokenPrefix,
  createdAt: token.createdAt,
  lastUsedAt: token.lastUsedAt,
});
