export { trackRoutes } from './event.routes.ts';
export { type ClientEnvironments, EventService } from './event.service.ts';
export { EventStore } from './event.store.ts';
export { EventWriter } from './event-writer.ts';
