export { readUnleash, UnleashFormatError, type UnleashModel } from './unleash-format.ts';
export { flagTypeOf, translateUnleash, variantValue, type NotCarried, type UnleashTranslation } from './unleash-import.ts';
export { unleashRoutes } from './unleash.routes.ts';
export { UnleashImportService, type UnleashImportResult } from './unleash.service.ts';
export { importUnleashCommand } from './unleash.cli.ts';
