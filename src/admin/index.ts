export { AdminTokenService } from './admin-token.service.ts';
export { instanceSecret } from './instance-secret.ts';
export { SettingsStore } from './settings.store.ts';
