export interface ApiKey {
  id: string;
  projectId: string;
  name: string;
  tokenPrefix: string;
  createdAt: string;
  revokedAt: string | null;
}

export const TOKEN_PREFIX = 'fpk_';

export const apiKeyView = (k: ApiKey) => ({
  id: k.id,
  name: k.name,
  prefix: k.tokenPrefix,
  createdAt: k.createdAt,
  revokedAt: k.revokedAt,
});
