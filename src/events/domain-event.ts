/**
 * Everything one capability announces for others to react to (docs/adr/0009-domain-events.md). Payloads
 * are plain ids and values, so this file imports no capability and every capability can import it.
 */
export type DomainEvent =
  | { type: 'project.created'; projectId: string; environmentIds: string[] }
  | { type: 'environment.created'; projectId: string; environmentId: string; createdAt: string }
  /** A flag was created or changed in these environments. */
  | { type: 'flag.changed'; projectId: string; slug: string; environmentIds: string[] }
  | { type: 'flag.deleted'; projectId: string; slug: string; environmentIds: string[] }
  /** A flag's slug changed in every environment (`from` answers 404 from now on). */
  | { type: 'flag.renamed'; projectId: string; from: string; to: string; environmentIds: string[] }
  /** An environment was deleted with its flags (its keys answer 404 from now on). */
  | { type: 'environment.deleted'; projectId: string; environmentId: string }
  /** A project was deleted with its environments, flags, segments and API keys. */
  | { type: 'project.deleted'; projectId: string; environmentIds: string[] }
  /** A segment was created, changed or deleted; rules in any environment of the project may use it. */
  | { type: 'segment.changed'; projectId: string; segmentKey: string; environmentIds: string[] }
  /** A segment is about to be deleted: `onTransaction` subscribers refuse while flags still use it. */
  | { type: 'segment.deleting'; projectId: string; segmentKey: string; environments: Array<{ id: string; name: string }> }
  /** A form is about to be deleted with its submissions: `onTransaction` subscribers act in its transaction. */
  | { type: 'form.deleting'; formId: string }
  /** A submission and its deliveries are stored; `deliveries` counts the deliveries queued with it. */
  | { type: 'submission.stored'; formId: string; submissionId: string; deliveries: number }
  /** A delivery of a submission was given up (issue 34: its form's owners get an e-mail). */
  | { type: 'delivery.failed'; formId: string; submissionId: string; deliveryId: string; kind: string; target: string; error: string | null }
  /** A change request was created or changed state (submitted, approved, rejected, cancelled). */
  | { type: 'change_request.changed'; projectId: string; changeRequestId: string }
  /** A release started, moved or ended (issue 33): the flags whose OFREP evaluations record exposures may have changed. */
  | { type: 'release.changed'; projectId: string; environmentId: string; releaseId: string; status: string }
  /** A project webhook has a delivery queued by a redelivery (the delivery loop wakes). */
  | { type: 'webhook.queued'; webhookId: string }
  /** An audit entry was written in the current transaction (it is only ever run in the transaction: the writer may use none of `emit`). */
  | { type: 'audit.recorded'; entry: RecordedAuditEntry };

/** An audit entry as written (audit/): who, what, where, and the changed fields before and after, secrets never among them. */
export interface RecordedAuditEntry {
  id: string;
  at: string;
  actor: { type: string; id: string | null; label: string };
  projectId: string | null;
  entity: string;
  entityId: string;
  environmentKey: string | null;
  action: string;
  changes: Record<string, { before?: unknown; after?: unknown }>;
}

export type DomainEventType = DomainEvent['type'];
export type DomainEventOf<T extends DomainEventType> = Extract<DomainEvent, { type: T }>;
