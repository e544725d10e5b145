/**
 * `@flagpost/openfeature`: OpenFeature providers for Flagpost. `FlagpostProvider` for
 * `@openfeature/server-sdk`, `FlagpostWebProvider` for `@openfeature/web-sdk`; a browser bundle that wants
 * only one of them imports `@flagpost/openfeature/web` (or `/server`).
 */
export { FlagpostProvider } from './server.ts';
export { FlagpostWebProvider, type FlagpostWebOptions } from './web.ts';
export type { FlagpostOptions, FlagpostEvent, ExposureEvent, TrackEvent } from './event-queue.ts';
