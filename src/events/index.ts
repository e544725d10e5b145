export type { DomainEvent, DomainEventOf, DomainEventType, RecordedAuditEntry } from './domain-event.ts';
export { DomainEvents, type Emit, type EventsLog } from './domain-events.ts';
