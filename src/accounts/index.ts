export { AccountService, ACCESS_TOKEN_PREFIX } from './account.service.ts';
export { AccountStore } from './account.store.ts';
export type { ScryptCost } from './password.ts';
export { accountRoutes } from './account.routes.ts';
export { SignInThrottle } from './sign-in-throttle.ts';
