import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type AutoResponseSettings, type Form, type MailPreview, type NotificationSettings } from '../api.ts';
import { ConditionsEditor } from '../targeting/ConditionsEditor.tsx';
import type { ConditionDraft } from '../targeting/conditions.ts';
import { Button, Checkbox, ErrorMessage, Field, GroupProblems, problemsOf, ProblemsProvider, rules, Section, TextArea } from '../ui/index.ts';
import { useCanWrite } from '../session.ts';
import { conditionDrafts, conditionsOf, lines, optional, usePatchForm } from './form-drafts.ts';
import { MailFrame } from './MailFrame.tsx';

// Issue 34: the form's e-mail: the notification (Reply-To, templates, CC/BCC, routes by condition), the
// auto-response to the submitter, and previews of both rendered by the server from a sample submission
// with the settings as they are being edited (POST /forms/{key}/mail-preview).

interface RouteDraft {
  emails: string;
  conditions: ConditionDraft[];
}

const TEMPLATE_HINT = 'Fields in double braces, such as New message from {{ name }}';
const SAMPLE = JSON.stringify({ name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello! I would like to know more.' }, null, 2);

export function MailSettings({ form }: { form: Form }) {
  const n = form.notifications ?? {};
  const a = form.autoResponse;
  const [replyToField, setReplyToField] = useState(n.replyToField ?? '');
  const [subject, setSubject] = useState(n.subject ?? '');
  const [fromName, setFromName] = useState(n.fromName ?? '');
  const [cc, setCc] = useState((n.cc ?? []).join('\n'));
  const [bcc, setBcc] = useState((n.bcc ?? []).join('\n'));
  const [routes, setRoutes] = useState<RouteDraft[]>((n.routes ?? []).map((r) => ({ emails: r.emails.join('\n'), conditions: conditionDrafts(r.conditions) })));
  const [enabled, setEnabled] = useState(a?.enabled ?? false);
  const [toField, setToField] = useState(a?.toField ?? '');
  const [arSubject, setArSubject] = useState(a?.subject ?? 'Thank you, {{ name }}');
  const [body, setBody] = useState(a?.body ?? '<p>Hi {{ name }}, we got your message and will answer soon.</p>');
  const [arFromName, setArFromName] = useState(a?.fromName ?? '');
  const [arReplyTo, setArReplyTo] = useState(a?.replyTo ?? '');
  const [includeSubmission, setIncludeSubmission] = useState(a?.includeSubmission ?? false);

  /** The notification settings to send, or a problem in words; null when nothing is set. */
  const notifications = (): NotificationSettings | null | string => {
    const drafts: NotificationSettings['routes'] = [];
    for (const [i, route] of routes.entries()) {
      const made = conditionsOf(route.conditions, `Route ${i + 1}, condition`);
      if ('problem' in made) return made.problem;
      drafts.push({ emails: lines(route.emails), conditions: made.conditions });
    }
    const settings: NotificationSettings = {
      replyToField: optional(replyToField),
      subject: optional(subject),
      fromName: optional(fromName),
      cc: lines(cc).length ? lines(cc) : undefined,
      bcc: lines(bcc).length ? lines(bcc) : undefined,
      routes: drafts.length ? drafts : undefined,
    };
    const set = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) as NotificationSettings;
    return Object.keys(set).length === 0 ? null : set;
  };
  /** The auto-response to send: null when it is off and holds no text. */
  const autoResponse = (): AutoResponseSettings | null => {
    if (!enabled && arSubject.trim() === '' && body.trim() === '') return null;
    const settings: AutoResponseSettings = { enabled, subject: arSubject.trim(), body };
    if (optional(toField)) settings.toField = optional(toField);
    if (optional(arFromName)) settings.fromName = optional(arFromName);
    if (optional(arReplyTo)) settings.replyTo = optional(arReplyTo);
    if (includeSubmission) settings.includeSubmission = true;
    return settings;
  };

  return (
    <>
      <NotificationsSection
        form={form}
        build={notifications}
        fields={{ replyToField, setReplyToField, subject, setSubject, fromName, setFromName, cc, setCc, bcc, setBcc, routes, setRoutes }}
      />
      <AutoResponseSection
        form={form}
        build={autoResponse}
        fields={{
          enabled,
          setEnabled,
          toField,
          setToField,
          arSubject,
          setArSubject,
          body,
          setBody,
          arFromName,
          setArFromName,
          arReplyTo,
          setArReplyTo,
          includeSubmission,
          setIncludeSubmission,
        }}
      />
      <MailPreviews form={form} notifications={notifications} autoResponse={autoResponse} />
    </>
  );
}

type Setter = (value: string) => void;

function NotificationsSection({
  form,
  build,
  fields: f,
}: {
  form: Form;
  build: () => NotificationSettings | null | string;
  fields: {
    replyToField: string;
    setReplyToField: Setter;
    subject: string;
    setSubject: Setter;
    fromName: string;
    setFromName: Setter;
    cc: string;
    setCc: Setter;
    bcc: string;
    setBcc: Setter;
    routes: RouteDraft[];
    setRoutes: (routes: RouteDraft[]) => void;
  };
}) {
  const canWrite = useCanWrite();
  const save = usePatchForm(form, 'Saved the notification settings');
  const [problem, setProblem] = useState<string | undefined>();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const notifications = build();
    setProblem(typeof notifications === 'string' ? notifications : undefined);
    if (typeof notifications !== 'string') save.mutate({ notifications });
  };
  const setRoute = (i: number, patch: Partial<RouteDraft>) => f.setRoutes(f.routes.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <Section title="Notifications">
      <p className="muted">
        Sent to the notification e-mails of the settings above, and to each route whose conditions the submission meets. An HTML and a text part, with a link to
        the submission.
      </p>
      <ProblemsProvider value={problemsOf(save.error)}>
        <form onSubmit={submit} aria-label="Notifications">
          <div className="settings-groups">
            <fieldset>
              <legend>Message</legend>
              <Field
                label="Reply-To field"
                path="notifications.replyToField"
                value={f.replyToField}
                onChange={f.setReplyToField}
                placeholder="email"
                hint="The field whose address answers go to; empty: the first of email, _replyto (used only when it holds one valid address)"
              />
              <Field
                label="Subject"
                path="notifications.subject"
                value={f.subject}
                onChange={f.setSubject}
                placeholder="New message from {{ name }}"
                hint={TEMPLATE_HINT}
              />
              <Field
                label="From name"
                path="notifications.fromName"
                value={f.fromName}
                onChange={f.setFromName}
                placeholder="{{ name }} via Flagpost"
                hint="The sender's name; the address stays the server's"
              />
            </fieldset>
            <fieldset>
              <legend>Copies</legend>
              <TextArea label="CC" path="notifications.cc" value={f.cc} onChange={f.setCc} hint="One address per line, at most 20" />
              <TextArea label="BCC" path="notifications.bcc" value={f.bcc} onChange={f.setBcc} hint="One address per line, at most 20" />
            </fieldset>
          </div>
          <fieldset>
            <legend>Routes</legend>
            <GroupProblems path="notifications.routes" />
            {f.routes.length === 0 && <p className="muted">No route: only the notification e-mails above get it.</p>}
            {f.routes.map((route, i) => (
              <fieldset key={i} className="rule">
                <legend>Route {i + 1}</legend>
                <TextArea
                  label={`Addresses of route ${i + 1}`}
                  path={`notifications.routes.${i}.emails`}
                  value={route.emails}
                  onChange={(emails) => setRoute(i, { emails })}
                  hint="One address per line"
                />
                <ConditionsEditor
                  conditions={route.conditions}
                  onChange={(conditions) => setRoute(i, { conditions })}
                  path={`notifications.routes.${i}.conditions`}
                  owner={`route ${i + 1}`}
                  disabled={!canWrite}
                />
                <Button variant="danger-text" size="small" onClick={() => f.setRoutes(f.routes.filter((_, j) => j !== i))} disabled={!canWrite}>
                  Remove route {i + 1}
                </Button>
              </fieldset>
            ))}
            <Button size="small" onClick={() => f.setRoutes([...f.routes, { emails: '', conditions: [] }])} disabled={!canWrite}>
              Add route
            </Button>
          </fieldset>
          {problem && (
            <div role="alert" className="error">
              <p>{problem}</p>
            </div>
          )}
          <ErrorMessage error={save.error} inline={['notifications']} />
          <Button type="submit" variant="primary" busy={save.isPending} busyText="Saving…" disabled={!canWrite}>
            Save notifications
          </Button>
        </form>
      </ProblemsProvider>
    </Section>
  );
}

function AutoResponseSection({
  form,
  build,
  fields: f,
}: {
  form: Form;
  build: () => AutoResponseSettings | null;
  fields: {
    enabled: boolean;
    setEnabled: (on: boolean) => void;
    toField: string;
    setToField: Setter;
    arSubject: string;
    setArSubject: Setter;
    body: string;
    setBody: Setter;
    arFromName: string;
    setArFromName: Setter;
    arReplyTo: string;
    setArReplyTo: Setter;
    includeSubmission: boolean;
    setIncludeSubmission: (on: boolean) => void;
  };
}) {
  const canWrite = useCanWrite();
  const save = usePatchForm(form, 'Saved the auto-response');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ autoResponse: build() });
  };
  return (
    <Section title="Auto-response">
      <p className="muted">A confirmation to the person who wrote: never for spam, at most one per address and form every 10 minutes.</p>
      <ProblemsProvider value={problemsOf(save.error)}>
        <form onSubmit={submit} aria-label="Auto-response">
          <Checkbox label="Send an auto-response" checked={f.enabled} onChange={f.setEnabled} />
          <div className="settings-groups">
            <fieldset>
              <legend>Message</legend>
              <Field label="Auto-response subject" path="autoResponse.subject" value={f.arSubject} onChange={f.setArSubject} hint={TEMPLATE_HINT} />
              <TextArea
                label="Body (HTML)"
                path="autoResponse.body"
                value={f.body}
                onChange={f.setBody}
                rows={6}
                spellCheck={false}
                hint="HTML with fields in double braces; values are escaped, the text part is made from it"
              />
              <Checkbox
                label="Include the submission"
                checked={f.includeSubmission}
                onChange={f.setIncludeSubmission}
                hint="Its fields as a table below the body"
              />
            </fieldset>
            <fieldset>
              <legend>Addresses</legend>
              <Field
                label="To field"
                path="autoResponse.toField"
                value={f.toField}
                onChange={f.setToField}
                placeholder="email"
                hint="The field holding the submitter's address; empty: the first of email, _replyto"
              />
              <Field label="Auto-response from name" path="autoResponse.fromName" value={f.arFromName} onChange={f.setArFromName} hint={TEMPLATE_HINT} />
              <Field
                label="Auto-response Reply-To"
                path="autoResponse.replyTo"
                type="email"
                value={f.arReplyTo}
                onChange={f.setArReplyTo}
                validate={rules.email}
                hint="Where answers to the confirmation go"
              />
            </fieldset>
          </div>
          <ErrorMessage error={save.error} inline={['autoResponse']} />
          <Button type="submit" variant="primary" busy={save.isPending} busyText="Saving…" disabled={!canWrite}>
            Save auto-response
          </Button>
        </form>
      </ProblemsProvider>
    </Section>
  );
}

function MailPreviews({
  form,
  notifications,
  autoResponse,
}: {
  form: Form;
  notifications: () => NotificationSettings | null | string;
  autoResponse: () => AutoResponseSettings | null;
}) {
  const canWrite = useCanWrite();
  const [sample, setSample] = useState(SAMPLE);
  const [problem, setProblem] = useState<string | undefined>();
  const preview = useMutation({
    mutationFn: (body: { data: Record<string, unknown>; notifications: NotificationSettings | null; autoResponse: AutoResponseSettings | null }) =>
      api<MailPreview>('POST', `/forms/${encodeURIComponent(form.key)}/mail-preview`, body),
    meta: { error: false, invalidates: [] },
  });
  const run = () => {
    let data: unknown;
    try {
      data = JSON.parse(sample);
    } catch {
      setProblem('The sample submission is not valid JSON');
      return;
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      setProblem('The sample submission must be a JSON object of fields');
      return;
    }
    const n = notifications();
    if (typeof n === 'string') {
      setProblem(n);
      return;
    }
    setProblem(undefined);
    preview.mutate({ data: data as Record<string, unknown>, notifications: n, autoResponse: autoResponse() });
  };
  return (
    <Section title="E-mail previews">
      <p className="muted">
        Both e-mails of a sample submission, rendered by the server with the settings above as they are now, saved or not. Nothing is sent.
      </p>
      <TextArea
        label="Sample submission (JSON)"
        value={sample}
        onChange={setSample}
        rows={5}
        spellCheck={false}
        validate={(v) => {
          try {
            JSON.parse(v);
            return undefined;
          } catch {
            return 'Not valid JSON';
          }
        }}
      />
      <Button variant="primary" onClick={run} busy={preview.isPending} busyText="Rendering…" disabled={!canWrite}>
        Preview e-mails
      </Button>
      {problem && (
        <div role="alert" className="error">
          <p>{problem}</p>
        </div>
      )}
      <ErrorMessage error={preview.error} />
      {preview.data && (
        <div className="mail-previews">
          <MailView
            title="Notification"
            mail={preview.data.notification}
            to={preview.data.notification.to.length ? preview.data.notification.to.join(', ') : 'nobody yet: add notification e-mails or a route'}
          />
          {preview.data.autoResponse ? (
            <MailView title="Auto-response" mail={preview.data.autoResponse} to={preview.data.autoResponse.to} />
          ) : (
            <div className="mail-preview">
              <h3>Auto-response</h3>
              <p className="muted">None would go: it is off, or the sample holds no single valid address in its address field.</p>
            </div>
          )}
        </div>
      )}
    </Section>
  );
}

function MailView({ title, mail, to }: { title: string; mail: MailPreview['notification'] | NonNullable<MailPreview['autoResponse']>; to: string }) {
  return (
    <div className="mail-preview">
      <h3>{title}</h3>
      <dl>
        <div className="pair">
          <dt>Subject</dt>
          <dd>{mail.subject}</dd>
        </div>
        <div className="pair">
          <dt>To</dt>
          <dd>{to}</dd>
        </div>
        {mail.fromName && (
          <div className="pair">
            <dt>From name</dt>
            <dd>{mail.fromName}</dd>
          </div>
        )}
        {mail.replyTo && (
          <div className="pair">
            <dt>Reply-To</dt>
            <dd>{mail.replyTo}</dd>
          </div>
        )}
        {mail.cc && mail.cc.length > 0 && (
          <div className="pair">
            <dt>CC</dt>
            <dd>{mail.cc.join(', ')}</dd>
          </div>
        )}
        {mail.bcc && mail.bcc.length > 0 && (
          <div className="pair">
            <dt>BCC</dt>
            <dd>{mail.bcc.join(', ')}</dd>
          </div>
        )}
      </dl>
      <MailFrame html={mail.html} title={`${title} e-mail, HTML part`} />
      <details>
        <summary>Text part</summary>
        <pre tabIndex={0}>{mail.text}</pre>
      </details>
    </div>
  );
}
