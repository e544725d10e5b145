import { nowIso } from '../db/codec.ts';
import type { DomainEventOf, DomainEvents } from '../events/index.ts';
import type { FormService } from '../forms/index.ts';
import type { MemberService } from '../identity/index.ts';
import type { OutboxService } from './outbox.service.ts';
import { textOf } from './submission-mail.ts';

export interface DeliveryAlertDeps {
  events: DomainEvents;
  forms: Pick<FormService, 'list'>;
  accounts: Pick<MemberService, 'listUsers'>;
  outbox: OutboxService;
  publicUrl: string;
  clock: () => Date;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * An e-mail to the owners of the instance when a delivery of a form ends failed (issue 34): queued in
 * the outbox as `alert` deliveries of the same submission (retried like any e-mail). An alert that
 * fails itself raises none.
 */
export class DeliveryAlerts {
  constructor(private readonly deps: DeliveryAlertDeps) {
    deps.events.onCommit('delivery.failed', (event) => this.alert(event));
  }

  private async alert(event: DomainEventOf<'delivery.failed'>): Promise<void> {
    if (event.kind === 'alert') return;
    const owners = (await this.deps.accounts.listUsers()).filter((u) => u.role === 'owner').map((u) => u.email);
    if (owners.length === 0) return;
    const form = (await this.deps.forms.list()).find((f) => f.id === event.formId);
    if (!form) return;
    const link = `${this.deps.publicUrl}/forms/${form.key}/submissions/${event.submissionId}`;
    // The target of a webhook may carry a token: the alert names its kind, not its URL.
    const what = event.kind === 'email' || event.kind === 'autoresponse' ? `${event.kind} to ${event.target}` : event.kind;
    const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;font-size:14px">
<p>A delivery of the form <strong>${escapeHtml(form.name)}</strong> (${escapeHtml(form.key)}) failed after its last attempt: ${escapeHtml(what)}.</p>
<p>Last error: ${escapeHtml(event.error ?? 'unknown')}</p>
<p><a href="${escapeHtml(link)}">Open the submission to re-send it</a></p>
</body></html>`;
    const payload = JSON.stringify({ subject: `Delivery failed: ${form.name.replace(/[\r\n]+/g, ' ')}`, text: textOf(html), html });
    await this.deps.outbox.enqueueNow(
      { id: event.submissionId, formId: event.formId },
      owners.map((to) => ({ kind: 'alert' as const, target: to, payload })),
      nowIso(this.deps.clock),
    );
  }
}
