import type { Role } from './actor.ts';

export interface User {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
  updatedAt: string;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
}

export interface AccessToken {
  id: string;
  userId: string;
  name: string;
  tokenPrefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** When it stops working; null only for a row written by hand (such a token never works). */
  expiresAt: string | null;
}

export const userView = (u: User) => ({ id: u.id, email: u.email, role: u.role, createdAt: u.createdAt });
export const invitationView = (i: Invitation) => ({ id: i.id, email: i.email, role: i.role, createdAt: i.createdAt, expiresAt: i.expiresAt });
export const accessTokenView = (t: AccessToken) => ({
  id: t.id,
  name: t.name,
  tokenPrefix: t.tokenPrefix,
  createdAt: t.createdAt,
  lastUsedAt: t.lastUsedAt,
  expiresAt: t.expiresAt,
});

/** E-mail addresses are compared without letter case and surrounding spaces. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();
