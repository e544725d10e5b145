// The part of oidc-provider (a dev dependency without bundled types) that test/identity/sso.test.ts uses.
declare module 'oidc-provider' {
  import type { Server } from 'node:http';

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface Context {
    oidc: {
      provider: { Grant: new (init: { clientId: string; accountId: string }) => Grant };
      client?: { clientId: string };
      session?: { accountId?: string };
    };
  }
  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }
  export interface Configuration {
    clients: Array<Record<string, unknown>>;
    scopes?: string[];
    claims?: Record<string, string[]>;
    cookies?: { keys: string[] };
    features?: Record<string, { enabled: boolean }>;
    findAccount(ctx: Context, id: string): Promise<Account>;
    loadExistingGrant?(ctx: Context): Promise<Grant | undefined>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    listen(port: number, host: string): Server;
  }
}
