export { instanceSecret } from './instance-secret.ts';
export { SettingsStore } from './settings.store.ts';
