import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Condition, type Form, type TestDeliveries, type WebhookRoute } from '../api.ts';
import { ConditionsEditor } from '../targeting/ConditionsEditor.tsx';
import type { ConditionDraft } from '../targeting/conditions.ts';
import { Badge, Button, ErrorMessage, Field, GroupProblems, plural, problemsOf, ProblemsProvider, rules, Section, Table, toast } from '../ui/index.ts';
import { useCanWrite } from '../session.ts';
import { conditionDrafts, conditionsOf, usePatchForm } from './form-drafts.ts';

// Issue 34: further webhooks of a form, each with conditions on the fields (a `topic` of `sales` to the
// CRM, `support` to the help desk), and the form's deliveries acted on: a test of every delivery at once,
// and a re-send of all failed ones.

interface HookDraft {
  url: string;
  conditions: ConditionDraft[];
}

export function WebhooksSection({ form }: { form: Form }) {
  const canWrite = useCanWrite();
  const [hooks, setHooks] = useState<HookDraft[]>(
    form.webhooks.map((h) => ({ url: h.url, conditions: conditionDrafts(h.conditions as Condition[] | undefined) })),
  );
  const [problem, setProblem] = useState<string | undefined>();
  const save = usePatchForm(form, 'Saved the webhooks');
  const set = (i: number, patch: Partial<HookDraft>) => setHooks(hooks.map((h, j) => (j === i ? { ...h, ...patch } : h)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const webhooks: WebhookRoute[] = [];
    for (const [i, hook] of hooks.entries()) {
      const made = conditionsOf(hook.conditions, `Webhook ${i + 1}, condition`);
      if ('problem' in made) {
        setProblem(made.problem);
        return;
      }
      webhooks.push({ url: hook.url.trim(), ...(made.conditions.length ? { conditions: made.conditions } : {}) });
    }
    setProblem(undefined);
    save.mutate({ webhooks });
  };
  return (
    <Section title="Webhooks">
      <p className="muted">Beside the webhook URL of the settings above, each sent when all its conditions hold (none: always), signed with the same secret.</p>
      <ProblemsProvider value={problemsOf(save.error)}>
        <form onSubmit={submit} aria-label="Webhooks">
          <GroupProblems path="webhooks" />
          {hooks.length === 0 && <p className="muted">No further webhook.</p>}
          {hooks.map((hook, i) => (
            <fieldset key={i} className="rule">
              <legend>Webhook {i + 1}</legend>
              <Field
                label={`URL of webhook ${i + 1}`}
                path={`webhooks.${i}.url`}
                type="url"
                value={hook.url}
                onChange={(url) => set(i, { url })}
                validate={(v) => rules.required(v) ?? rules.url(v)}
                required
              />
              <ConditionsEditor
                conditions={hook.conditions}
                onChange={(conditions) => set(i, { conditions })}
                path={`webhooks.${i}.conditions`}
                owner={`webhook ${i + 1}`}
                disabled={!canWrite}
              />
              <Button variant="danger-text" size="small" onClick={() => setHooks(hooks.filter((_, j) => j !== i))} disabled={!canWrite}>
                Remove webhook {i + 1}
              </Button>
            </fieldset>
          ))}
          <p>
            <Button size="small" onClick={() => setHooks([...hooks, { url: '', conditions: [] }])} disabled={!canWrite || hooks.length >= 20}>
              Add webhook
            </Button>
          </p>
          {problem && (
            <div role="alert" className="error">
              <p>{problem}</p>
            </div>
          )}
          <ErrorMessage error={save.error} inline={['webhooks']} />
          <Button type="submit" variant="primary" busy={save.isPending} busyText="Saving…" disabled={!canWrite}>
            Save webhooks
          </Button>
        </form>
      </ProblemsProvider>
    </Section>
  );
}

export function DeliveryActions({ form }: { form: Form }) {
  const canWrite = useCanWrite();
  const test = useMutation({
    mutationFn: () => api<TestDeliveries>('POST', `/forms/${encodeURIComponent(form.key)}/test-delivery`, {}),
    meta: { error: false, invalidates: [] },
  });
  const resendFailed = useMutation({
    mutationFn: () => api<{ resent: number }>('POST', `/forms/${encodeURIComponent(form.key)}/deliveries/resend-failed`),
    meta: { error: 'Not re-sent', invalidates: [['submissions', form.key], ['submission', form.key], ['form-analytics', form.key], ['audit']] },
    onSuccess: ({ resent }) =>
      toast.success(resent === 0 ? 'No failed delivery to re-send' : `Queued ${plural(resent, 'failed delivery', 'failed deliveries')} again`),
  });
  return (
    <Section title="Deliveries">
      <p className="muted">
        A test sends what a submission would get (webhooks, chat messages, notifications) at once and stores nothing. Re-sending queues every failed delivery of
        the form again; each submission shows its own.
      </p>
      <div className="actions">
        <Button onClick={() => test.mutate()} busy={test.isPending} busyText="Sending…" disabled={!canWrite}>
          Send a test delivery
        </Button>
        <Button onClick={() => resendFailed.mutate()} busy={resendFailed.isPending} busyText="Queuing…" disabled={!canWrite}>
          Re-send all failed
        </Button>
      </div>
      <ErrorMessage error={test.error} />
      {test.data && test.data.deliveries.length === 0 && <p role="status">The form has no delivery to test: set a webhook, a chat or a notification e-mail.</p>}
      {test.data && test.data.deliveries.length > 0 && (
        <Table label="Test delivery results">
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Target</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {test.data.deliveries.map((d, i) => (
              <tr key={`${i}:${d.target}`}>
                <td>{d.kind}</td>
                <td className="break">{d.target}</td>
                <td>
                  {d.ok ? <Badge tone="ok">Sent</Badge> : <Badge tone="danger">Failed</Badge>} {d.statusCode !== null ? `HTTP ${d.statusCode}` : ''}{' '}
                  {d.error ?? ''}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </Section>
  );
}
