import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useLocation } from 'wouter';
import { api, type FlagEntry } from '../api.ts';
import { useCanWrite } from '../session.ts';
import { Badge, Button, ConfirmDialog, DateText, Field, problemsOf, ProblemsProvider, rules, Section, toast } from '../ui/index.ts';

const TAG = /^[a-z0-9](?:[a-z0-9._-]{0,38}[a-z0-9])?$/;
const tagsOf = (text: string) => [
  ...new Set(
    text
      .split(/[\s,]+/)
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  ),
];

/** What a flag shares across environments: its slug (rename), tags, archived or not; and its deletion. */
export function FlagSettings({ projectKey, flag }: { projectKey: string; flag: FlagEntry }) {
  const canWrite = useCanWrite();
  const [, navigate] = useLocation();
  const [slug, setSlug] = useState(flag.slug);
  const [tags, setTags] = useState((flag.tags ?? []).join(', '));
  const [asking, setAsking] = useState<'archive' | 'delete' | undefined>();
  const path = `/projects/${encodeURIComponent(projectKey)}/flags/${encodeURIComponent(flag.slug)}`;
  const invalidates = [['flags', projectKey], ['audit']];
  const update = useMutation({
    mutationFn: (body: { slug?: string; tags?: string[]; archived?: boolean }) => api<FlagEntry>('PATCH', path, body),
    meta: { error: false, invalidates },
    onSuccess: (answer, body) => {
      setAsking(undefined);
      if (body.slug) {
        toast.success(`Renamed ${flag.slug} to ${answer.slug}`);
        navigate(`/projects/${projectKey}/flags/${encodeURIComponent(answer.slug)}`, { replace: true });
      } else if (body.archived !== undefined) toast.success(body.archived ? `Archived ${flag.slug}` : `Restored ${flag.slug}`);
      else toast.success('Saved the tags');
    },
  });
  const remove = useMutation({
    mutationFn: () => api('DELETE', path),
    meta: { error: false, invalidates },
    onSuccess: () => {
      toast.success(`Deleted flag ${flag.slug}`);
      navigate(`/projects/${projectKey}`);
    },
  });
  const tagProblem = (text: string) => {
    const bad = tagsOf(text).filter((t) => !TAG.test(t));
    if (bad.length > 0) return `Not a tag: ${bad.join(', ')} (lower-case letters, digits, . _ -)`;
    return tagsOf(text).length > 20 ? 'At most 20 tags' : undefined;
  };
  const on = flag.environments.filter((e) => e.enabled).map((e) => e.environment.name);
  return (
    <Section title="Flag settings">
      <ProblemsProvider value={problemsOf(update.error)}>
        <form
          className="inline"
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            if (!rules.slug(slug) && slug.trim() !== flag.slug) update.mutate({ slug: slug.trim() });
          }}
        >
          <Field label="Slug" path="slug" value={slug} onChange={setSlug} validate={rules.slug} disabled={!canWrite} />
          <Button
            type="submit"
            busy={update.isPending && update.variables?.slug !== undefined}
            busyText="Renaming…"
            disabled={!canWrite || slug.trim() === flag.slug}
          >
            Rename flag
          </Button>
        </form>
        <p className="muted small-text">The old slug answers 404 after a rename (no redirect): update the code that reads it, or it gets its default value.</p>
        <form
          className="inline"
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            if (!tagProblem(tags)) update.mutate({ tags: tagsOf(tags) });
          }}
        >
          <Field label="Tags" path="tags" value={tags} onChange={setTags} validate={tagProblem} hint="Separated by commas or spaces" disabled={!canWrite} />
          <Button type="submit" busy={update.isPending && update.variables?.tags !== undefined} busyText="Saving…" disabled={!canWrite}>
            Save tags
          </Button>
        </form>
      </ProblemsProvider>
      {update.error && !problemsOf(update.error).length ? (
        <div role="alert" className="error">
          <p>{update.error.message}</p>
        </div>
      ) : null}
      <div className="actions">
        {flag.archivedAt ? (
          <>
            <Badge tone="muted">
              Archived <DateText iso={flag.archivedAt} />
            </Badge>
            <Button onClick={() => update.mutate({ archived: false })} disabled={!canWrite}>
              Restore flag
            </Button>
          </>
        ) : (
          <Button onClick={() => setAsking('archive')} disabled={!canWrite}>
            Archive flag…
          </Button>
        )}
        <Button variant="danger" onClick={() => setAsking('delete')} disabled={!canWrite}>
          Delete flag…
        </Button>
      </div>
      <ConfirmDialog
        open={asking === 'archive'}
        title={`Archive ${flag.slug}?`}
        confirmLabel="Archive flag"
        pendingLabel="Archiving…"
        onConfirm={() => update.mutate({ archived: true })}
        onCancel={() => setAsking(undefined)}
        pending={update.isPending}
        error={update.error}
      >
        <p>
          It leaves the list of active flags and is still served as it is
          {on.length > 0 ? `: it is on in ${on.join(', ')}. Switch it off first to stop serving it.` : '.'}
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={asking === 'delete'}
        title={`Delete flag ${flag.slug}?`}
        typeName={flag.slug}
        confirmLabel="Delete flag"
        onConfirm={() => remove.mutate()}
        onCancel={() => {
          remove.reset();
          setAsking(undefined);
        }}
        pending={remove.isPending}
        error={remove.error}
      >
        <p>It goes from every environment with its feedback; reads of it answer 404. This cannot be undone.</p>
      </ConfirmDialog>
    </Section>
  );
}
