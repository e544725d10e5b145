export { AdminTokenService } from './admin-token.service.ts';
export { SettingsStore } from './settings.store.ts';
