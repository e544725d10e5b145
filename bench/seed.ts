import { randomBytes } from 'node:crypto';

// The bench data set, written through the admin API (contract "Admin API"): a project whose production
// environment has 20 flags, one of them a preview flag with rich-text content; another project whose
// production environment has 1,000 flags (flags are created in every environment of a project, so the
// large environment lives in its own project); and a form with uploads on.

export interface BenchData {
  small: { projectKey: string; environmentKey: string; slug: string };
  large: { projectKey: string; environmentKey: string };
  /** Undefined when the form endpoint does not exist yet. */
  formKey: string | undefined;
}

const previewDoc = {
  type: 'doc',
  content: [
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'A faster checkout' }] },
    {
      type: 'paragraph',
      content: [
        { type: 'text', text: 'Try the new one-page checkout and ' },
        { type: 'text', text: 'tell us', marks: [{ type: 'bold' }] },
        { type: 'text', text: ' what you think.' },
      ],
    },
  ],
};

function flagBody(i: number): Record<string, unknown> {
  return {
    slug: `feature-${String(i).padStart(4, '0')}`,
    enabled: i % 3 !== 0,
    description: `Rollout of feature ${i} for the web and mobile apps`,
    payload: i % 2 === 0 ? { variant: i % 4 === 0 ? 'b' : 'a', rollout: (i * 7) % 100, colors: ['#0a84ff', '#30d158'] } : null,
    expiredAt: i % 5 === 0 ? '2027-06-30T00:00:00.000Z' : null,
  };
}

export async function seed(base: string, adminToken: string): Promise<BenchData> {
  const admin = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(base + url, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  };
  const created = async (method: string, url: string, body?: unknown) => {
    const res = await admin(method, url, body);
    if (res.status !== 201) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json;
  };
  const production = (project: { environments: Array<{ key: string; name: string }> }) =>
    (project.environments.find((e) => e.name === 'production') ?? project.environments[0]!).key;

  const shop = await created('POST', '/admin/v1/projects', { name: 'Shop' });
  for (let i = 1; i <= 19; i++) await created('POST', `/admin/v1/projects/${shop.key}/flags`, flagBody(i));
  await created('POST', `/admin/v1/projects/${shop.key}/flags`, {
    slug: 'new-checkout',
    enabled: true,
    description: 'One-page checkout',
    isPreview: true,
    previewName: 'New checkout',
    previewContent: previewDoc,
  });

  const big = await created('POST', '/admin/v1/projects', { name: 'Catalogue' });
  const pending = Array.from({ length: 1000 }, (_, i) => i + 1);
  // Eight writers at once: SQLite takes them one by one, but the HTTP round trips overlap.
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = pending.shift(); i !== undefined; i = pending.shift()) await created('POST', `/admin/v1/projects/${big.key}/flags`, flagBody(i));
    }),
  );

  const form = await admin('POST', '/admin/v1/forms', { name: 'Contact', uploadsEnabled: true });
  const formKey = form.status === 201 ? (form.json.key as string) : undefined;
  return {
    small: { projectKey: shop.key, environmentKey: production(shop), slug: 'feature-0002' },
    large: { projectKey: big.key, environmentKey: production(big) },
    formKey,
  };
}

/** A multipart/form-data body with a text field and `files` file parts of `size` random bytes each. */
export function multipartBody(files: number, size: number): { body: Buffer; contentType: string } {
  const boundary = `----flagpostbench${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda Lovelace\r\n`)];
  for (let i = 0; i < files; i++) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="scan-${i}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      randomBytes(size),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}
