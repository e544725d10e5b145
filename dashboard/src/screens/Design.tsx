import { useState } from 'react';
import { ApiError } from '../api.ts';
import {
  Badge,
  Breadcrumbs,
  Button,
  ConfirmDialog,
  CopyButton,
  DateText,
  Dialog,
  EmptyState,
  ErrorMessage,
  Field,
  Loading,
  ProblemsProvider,
  problemsOf,
  rules,
  Section,
  Select,
  Switch,
  Table,
  Tabs,
  TextArea,
  ThemeSwitch,
  toast,
} from '../ui/index.ts';

const TOKENS = ['--bg', '--surface', '--surface-2', '--ink', '--muted', '--line', '--accent', '--danger', '--ok', '--warn-soft'];

// The design system's own page (dashboard/README.md): every component, live, in the current theme.
export default function DesignScreen() {
  const [on, setOn] = useState(true);
  const [slug, setSlug] = useState('Not a slug!');
  const [url, setUrl] = useState('');
  const [notes, setNotes] = useState('');
  const [env, setEnv] = useState('production');
  const [tab, setTab] = useState('one');
  const [dialog, setDialog] = useState(false);
  const [confirm, setConfirm] = useState(false);
  const refused = new ApiError(400, 'Invalid request', [{ field: 'body.name', reason: 'must NOT have fewer than 10 characters' }]);
  const [name, setName] = useState('short');
  return (
    <>
      <Breadcrumbs items={[{ label: 'Projects', href: '/projects' }, { label: 'Design system' }]} />
      <h1>Design system</h1>
      <p className="muted">Every component of dashboard/src/ui/, as the screens use them. Switch the theme to see both.</p>
      <Section title="Theme and tokens">
        <ThemeSwitch />
        <div className="swatches">
          {TOKENS.map((t) => (
            <div key={t} className="swatch">
              <span className={`swatch-${t.slice(2)}`} />
              <code>{t}</code>
            </div>
          ))}
        </div>
      </Section>
      <Section title="Buttons">
        <div className="actions">
          <Button variant="primary">Primary</Button>
          <Button>Secondary</Button>
          <Button variant="danger">Danger</Button>
          <Button variant="ghost">Ghost</Button>
          <Button variant="primary" busy busyText="Saving…">
            Save
          </Button>
          <Button size="small">Small</Button>
          <CopyButton text="copied text" label="Copy" />
        </div>
      </Section>
      <Section title="Switches">
        <Switch label="Enabled in production" checked={on} onChange={setOn} hint="A labelled switch for forms" />
        <Switch ariaLabel="demo in staging" checked={!on} onChange={(v) => setOn(!v)} />
        <Switch ariaLabel="disabled switch" checked={false} onChange={() => {}} disabled />
      </Section>
      <Section title="Fields and inline validation">
        <Field label="Slug" value={slug} onChange={setSlug} validate={rules.slug} hint="The client's rule shows once the field is left" />
        <Field label="Webhook URL" type="url" value={url} onChange={setUrl} validate={rules.url} />
        <ProblemsProvider value={problemsOf(refused)}>
          <Field label="Name" value={name} onChange={setName} path="name" hint="The server's refusal, in words; it goes once the value changes" />
        </ProblemsProvider>
        <TextArea label="Notes" value={notes} onChange={setNotes} hint="A textarea" />
        <Select label="Environment" value={env} onChange={setEnv}>
          <option value="production">production</option>
          <option value="staging">staging</option>
        </Select>
      </Section>
      <Section title="Tabs">
        <Tabs
          label="Demo"
          tabs={[
            { key: 'one', title: 'First' },
            { key: 'two', title: 'Second' },
          ]}
          selected={tab}
          onSelect={setTab}
        >
          <p>Panel of the {tab === 'one' ? 'first' : 'second'} tab (arrow keys move between tabs).</p>
        </Tabs>
      </Section>
      <Section title="Table">
        <Table label="Demo flags">
          <thead>
            <tr>
              <th scope="col">Flag</th>
              <th scope="col">production</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <th scope="row">
                checkout <Badge>string</Badge> <Badge tone="warn">Expired</Badge>
              </th>
              <td>
                <Switch ariaLabel="checkout in production" checked={on} onChange={setOn} />
              </td>
              <td>
                <DateText iso={new Date().toISOString()} />
              </td>
            </tr>
          </tbody>
        </Table>
      </Section>
      <Section title="Badges">
        <Badge>Info</Badge> <Badge tone="ok">On</Badge> <Badge tone="warn">Expired</Badge> <Badge tone="danger">Spam</Badge>{' '}
        <Badge tone="muted">Archived</Badge>
      </Section>
      <Section title="Dialogs and toasts">
        <div className="actions">
          <Button onClick={() => setDialog(true)}>Open a dialog</Button>
          <Button variant="danger" onClick={() => setConfirm(true)}>
            Delete demo…
          </Button>
          <Button onClick={() => toast.success('Saved production')}>Success toast</Button>
          <Button onClick={() => toast.error(refused, 'Not saved')}>Error toast</Button>
        </div>
        <Dialog title="A dialog" open={dialog} onClose={() => setDialog(false)}>
          <p>Focus stays inside; Escape closes it.</p>
          <Button onClick={() => setDialog(false)}>Close</Button>
        </Dialog>
        <ConfirmDialog
          open={confirm}
          title="Delete flag demo?"
          typeName="demo"
          confirmLabel="Delete flag"
          onConfirm={() => setConfirm(false)}
          onCancel={() => setConfirm(false)}
          pending={false}
        />
      </Section>
      <Section title="Empty state, loading, error">
        <EmptyState title="No flag yet" action={<Button variant="primary">Create a flag</Button>}>
          Flags switch features on and off without a deploy.
        </EmptyState>
        <div data-demo>
          <Loading what="an example" />
        </div>
        <ErrorMessage error={new ApiError(409, 'A flag with slug checkout already exists in project Web shop')} />
      </Section>
    </>
  );
}
