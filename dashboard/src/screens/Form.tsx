import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { useLocation } from 'wouter';
import { api, type Form } from '../api.ts';
import {
  Checkbox,
  ConfirmDelete,
  CopyButton,
  ErrorMessage,
  Field,
  Loading,
  problemsOf,
  ProblemsProvider,
  rules,
  Section,
  Select,
  TextArea,
  toast,
} from '../ui/index.ts';
import { useCanWrite } from '../session.ts';
import { FormHeader, useForm } from './Forms.tsx';
import { AnalyticsSection } from './FormAnalytics.tsx';
import { FieldRulesSection, FilePolicySection, SpamChecksSection } from './FormChecks.tsx';
import { MailSettings } from './FormMail.tsx';
import { ReadTokensSection } from './FormReadTokens.tsx';
import { DeliveryActions, WebhooksSection } from './FormWebhooks.tsx';

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
const orNull = (text: string) => (text.trim() === '' ? null : text.trim());

export function FormScreen({ params }: { params: { key: string } }) {
  const form = useForm(params.key);
  // Kept here: the settings form is rebuilt from the server's answer after each save.
  const [secret, setSecret] = useState<string | undefined>();
  if (form.isPending) return <Loading what="the form" />;
  if (form.error) return <ErrorMessage error={form.error} />;
  return (
    <>
      <FormHeader form={form.data} current="settings" />
      <AnalyticsSection form={form.data} />
      <Endpoint form={form.data} />
      <Settings key={form.data.updatedAt} form={form.data} secret={secret} onSecret={setSecret} />
      {/* Issue 34's groups: each saves its own settings and keeps its draft while another group saves. */}
      <MailSettings form={form.data} />
      <FieldRulesSection form={form.data} />
      <FilePolicySection form={form.data} />
      <SpamChecksSection form={form.data} />
      <WebhooksSection form={form.data} />
      <DeliveryActions form={form.data} />
      <ReadTokensSection form={form.data} />
      <DeleteForm form={form.data} />
    </>
  );
}

function Endpoint({ form }: { form: Form }) {
  const snippet = `<form action="${form.endpoint}" method="POST" enctype="multipart/form-data">
  <label>Name <input name="name" required></label>
  <label>E-mail <input name="email" type="email" required></label>
  <label>Message <textarea name="message"></textarea></label>${
    form.uploadsEnabled
      ? `
  <label>Attachment <input name="attachment" type="file"></label>`
      : ''
  }${
    form.honeypot
      ? `
  <input name="${form.honeypot}" type="text" tabindex="-1" autocomplete="off" hidden>`
      : ''
  }
  <button type="submit">Send</button>
</form>`;
  return (
    <Section title="Endpoint">
      <p>
        <code>{form.endpoint}</code> <CopyButton text={form.endpoint} label="Copy endpoint" />
      </p>
      <p className="muted">Post any HTML form here; add ?mode=rest (or Accept: application/json) for a JSON answer instead of a redirect.</p>
      <pre tabIndex={0}>
        <code>{snippet}</code>
      </pre>
      <CopyButton text={snippet} label="Copy HTML snippet" />
    </Section>
  );
}

function Settings({ form, secret, onSecret }: { form: Form; secret: string | undefined; onSecret: (secret: string | undefined) => void }) {
  const canWrite = useCanWrite();
  const [name, setName] = useState(form.name);
  const [enabled, setEnabled] = useState(form.enabled);
  const [uploads, setUploads] = useState(form.uploadsEnabled);
  const [honeypot, setHoneypot] = useState(form.honeypot ?? '');
  const [websites, setWebsites] = useState(form.websites.join('\n'));
  const [blockedIps, setBlockedIps] = useState(form.blockedIps.join('\n'));
  const [successUrl, setSuccessUrl] = useState(form.successUrl ?? '');
  const [errorUrl, setErrorUrl] = useState(form.errorUrl ?? '');
  const [redirectUrl, setRedirectUrl] = useState(form.redirectUrl ?? '');
  const [webhookUrl, setWebhookUrl] = useState(form.webhookUrl ?? '');
  const [notifyEmails, setNotifyEmails] = useState(form.notifyEmails.join('\n'));
  const [retention, setRetention] = useState(form.retentionDays?.toString() ?? '');
  const [dropFiles, setDropFiles] = useState(form.deleteFilesAfterDelivery);
  const [slackUrl, setSlackUrl] = useState(form.slackWebhookUrl ?? '');
  const [discordUrl, setDiscordUrl] = useState(form.discordWebhookUrl ?? '');
  const [captchaProvider, setCaptchaProvider] = useState(form.captcha?.provider ?? '');
  const [captchaSecret, setCaptchaSecret] = useState('');
  const [minScore, setMinScore] = useState(form.captcha?.minScore?.toString() ?? '');
  const [problem, setProblem] = useState<string | undefined>();
  const secretId = useId();
  /** The captcha part of the PATCH: the secret is write-only, so a change of the check needs it again. */
  const captchaPatch = (): { captcha?: unknown } | string => {
    if (retention.trim() !== '' && !/^\d+$/.test(retention.trim())) return 'Keep submissions for must be a whole number of days';
    const score = minScore.trim() === '' ? null : Number(minScore);
    if (score !== null && !(score >= 0 && score <= 1)) return 'Minimum score must be a number from 0 to 1';
    if (captchaProvider === '') return form.captcha ? { captcha: null } : {};
    const unchanged = form.captcha && form.captcha.provider === captchaProvider && (form.captcha.minScore ?? null) === score;
    if (captchaSecret.trim() === '') return unchanged ? {} : 'Enter the CAPTCHA secret key to change the CAPTCHA check';
    return { captcha: { provider: captchaProvider, secret: captchaSecret.trim(), minScore: score } };
  };
  const save = useMutation({
    mutationFn: (captcha: { captcha?: unknown }) =>
      api<Form>('PATCH', `/forms/${encodeURIComponent(form.key)}`, {
        ...captcha,
        name: name.trim(),
        enabled,
        uploadsEnabled: uploads,
        honeypot: orNull(honeypot),
        websites: lines(websites),
        blockedIps: lines(blockedIps),
        successUrl: orNull(successUrl),
        errorUrl: orNull(errorUrl),
        redirectUrl: orNull(redirectUrl),
        webhookUrl: orNull(webhookUrl),
        notifyEmails: lines(notifyEmails),
        retentionDays: retention.trim() === '' ? null : Number(retention.trim()),
        deleteFilesAfterDelivery: dropFiles,
        slackWebhookUrl: orNull(slackUrl),
        discordWebhookUrl: orNull(discordUrl),
      }),
    meta: { success: 'Saved the form settings', error: false, invalidates: [['form', form.key], ['forms'], ['audit']] },
    onSuccess: (answer) => onSecret(answer.webhookSecret),
  });
  const rotate = useMutation({
    mutationFn: () => api<{ webhookSecret: string }>('POST', `/forms/${encodeURIComponent(form.key)}/webhook-secret`),
    meta: { success: 'Rotated the webhook secret', error: 'Not rotated', invalidates: [['form', form.key], ['audit']] },
    onSuccess: (answer) => onSecret(answer.webhookSecret),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const captcha = captchaPatch();
    if (typeof captcha === 'string') {
      setProblem(captcha);
      return;
    }
    setProblem(undefined);
    save.mutate(captcha);
  };
  return (
    <Section title="Settings">
      <ProblemsProvider value={problemsOf(save.error)}>
        <form onSubmit={submit}>
          <div className="settings-groups">
            <fieldset>
              <legend>Basics</legend>
              <Field label="Name" path="name" value={name} onChange={setName} validate={rules.required} required />
              <Checkbox label="Enabled" checked={enabled} onChange={setEnabled} hint="Off: the endpoint refuses submissions" />
              <Checkbox label="Uploads enabled" checked={uploads} onChange={setUploads} hint="Accept files (multipart/form-data)" />
            </fieldset>
            <fieldset>
              <legend>Spam protection</legend>
              <Field label="Honeypot field" path="honeypot" value={honeypot} onChange={setHoneypot} hint="A hidden field bots fill in; empty turns it off" />
              <TextArea
                label="Websites"
                path="websites"
                value={websites}
                onChange={setWebsites}
                hint="One origin per line, such as https://example.com; empty allows any"
              />
              <TextArea label="Blocked IPs" path="blockedIps" value={blockedIps} onChange={setBlockedIps} hint="One address or CIDR range per line" />
              <Select label="CAPTCHA" path="captcha" value={captchaProvider} onChange={setCaptchaProvider}>
                <option value="">None</option>
                <option value="turnstile">Cloudflare Turnstile</option>
                <option value="hcaptcha">hCaptcha</option>
                <option value="recaptcha">Google reCAPTCHA</option>
              </Select>
              {captchaProvider !== '' && (
                <>
                  <Field
                    label="CAPTCHA secret key"
                    path="captcha.secret"
                    type="password"
                    value={captchaSecret}
                    onChange={setCaptchaSecret}
                    autoComplete="off"
                    hint={form.captcha ? 'Stored and never shown; leave empty to keep it' : "The provider's secret key"}
                  />
                  <Field
                    label="Minimum score"
                    path="captcha.minScore"
                    value={minScore}
                    onChange={setMinScore}
                    inputMode="decimal"
                    hint="0 to 1, for reCAPTCHA v3 and hCaptcha Enterprise; empty: any success"
                  />
                </>
              )}
            </fieldset>
            <fieldset>
              <legend>Redirects</legend>
              <Field
                label="Success URL"
                path="successUrl"
                type="url"
                value={successUrl}
                onChange={setSuccessUrl}
                validate={rules.url}
                hint="Your own page after a submission; empty uses Flagpost's"
              />
              <Field label="Error URL" path="errorUrl" type="url" value={errorUrl} onChange={setErrorUrl} validate={rules.url} />
              <Field
                label="Redirect URL"
                path="redirectUrl"
                type="url"
                value={redirectUrl}
                onChange={setRedirectUrl}
                validate={rules.url}
                hint="Where the result page's Go back leads"
              />
            </fieldset>
            <fieldset>
              <legend>Deliveries</legend>
              <Field
                label="Webhook URL"
                path="webhookUrl"
                type="url"
                value={webhookUrl}
                onChange={setWebhookUrl}
                validate={rules.url}
                hint="Each submission is POSTed here, signed"
              />
              <TextArea
                label="Notification e-mails"
                path="notifyEmails"
                value={notifyEmails}
                onChange={setNotifyEmails}
                hint="One address per line, at most 20"
              />
              <Field
                label="Slack webhook URL"
                path="slackWebhookUrl"
                type="url"
                value={slackUrl}
                onChange={setSlackUrl}
                validate={rules.url}
                hint="A Slack incoming webhook: a message per submission"
              />
              <Field
                label="Discord webhook URL"
                path="discordWebhookUrl"
                type="url"
                value={discordUrl}
                onChange={setDiscordUrl}
                validate={rules.url}
                hint="A Discord channel webhook: a message per submission"
              />
            </fieldset>
            <fieldset>
              <legend>Retention</legend>
              <Field
                label="Keep submissions for (days)"
                path="retentionDays"
                value={retention}
                onChange={setRetention}
                inputMode="numeric"
                validate={(v) => (v.trim() === '' || /^\d+$/.test(v.trim()) ? undefined : 'Enter a whole number of days, or nothing to keep them')}
                hint="Older submissions are deleted with their files; empty keeps them"
              />
              <Checkbox label="Delete files once delivered" checked={dropFiles} onChange={setDropFiles} />
            </fieldset>
          </div>
          {problem && (
            <div role="alert" className="error">
              <p>{problem}</p>
            </div>
          )}
          <ErrorMessage error={save.error} />
          <button type="submit" className="primary" disabled={save.isPending || !canWrite}>
            {save.isPending ? 'Saving…' : 'Save settings'}
          </button>
        </form>
      </ProblemsProvider>
      {form.webhookUrl && (
        <p>
          <button type="button" onClick={() => rotate.mutate()} disabled={rotate.isPending || !canWrite}>
            {rotate.isPending ? 'Rotating…' : 'Rotate webhook secret'}
          </button>
        </p>
      )}
      <ErrorMessage error={rotate.error} />
      {secret && (
        <div className="notice" role="status">
          <div className="field">
            <label htmlFor={secretId}>Webhook secret</label>
            <input id={secretId} readOnly value={secret} />
          </div>
          <CopyButton text={secret} label="Copy webhook secret" /> <strong>Shown once:</strong> deliveries are signed with it.
        </div>
      )}
    </Section>
  );
}

function DeleteForm({ form }: { form: Form }) {
  const canWrite = useCanWrite();
  const [, navigate] = useLocation();
  const [asking, setAsking] = useState(false);
  const remove = useMutation({
    mutationFn: () => api('DELETE', `/forms/${encodeURIComponent(form.key)}`),
    meta: { error: false, invalidates: [['forms'], ['audit']] },
    onSuccess: () => {
      toast.success(`Deleted form ${form.name}`);
      navigate('/forms');
    },
  });
  return (
    <Section title="Delete">
      {!asking && (
        <button type="button" className="danger" onClick={() => setAsking(true)} disabled={!canWrite}>
          Delete form
        </button>
      )}
      {asking && (
        <ConfirmDelete
          what="form"
          name={form.name}
          action="Delete form and its submissions"
          pending={remove.isPending}
          error={remove.error}
          onConfirm={() => remove.mutate()}
          onCancel={() => setAsking(false)}
        />
      )}
    </Section>
  );
}
