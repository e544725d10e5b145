export { AccountService, ACCESS_TOKEN_DEFAULT_DAYS, ACCESS_TOKEN_MAX_DAYS, ACCESS_TOKEN_PREFIX } from './account.service.ts';
export { AccountStore } from './account.store.ts';
export type { ScryptCost } from './password.ts';
export { accountRoutes } from './account.routes.ts';
export { PasswordWork } from './password-work.ts';
export { SignInService } from './sign-in.service.ts';
export { SignInThrottles } from './sign-in-throttles.ts';
export { ThrottleStore } from './throttle.store.ts';
