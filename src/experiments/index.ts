export { trackRoutes } from './event.routes.ts';
export { type ClientEnvironments, EventService } from './event.service.ts';
export { EventStore } from './event.store.ts';
export { EventWriter } from './event-writer.ts';
export { experimentAdminRoutes } from './experiment.routes.ts';
export { ExperimentService } from './experiment.service.ts';
export { ExperimentStore } from './experiment.store.ts';
export { MetricService } from './metric.service.ts';
export { MetricStore } from './metric.store.ts';
