import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { CachedAnswer } from './flag.read-model.ts';

// Pre-compressed flag answers (issue 10). An answer of more than MIN_BYTES is compressed at most once
// per encoding and per snapshot (the first read that asks for it), never per request; the variants
// live as long as the answer they belong to. Each variant is its own representation with its own
// ETag (RFC 9110 8.8.3): the identity ETag with `.br` or `.gz` before the closing quote (a dot is no
// base64url character, so no identity ETag ends like that).

export type Encoding = 'br' | 'gzip';

/** Smaller answers are sent as they are: compression would save little and cost a header. */
export const MIN_BYTES = 1024;

/** The answer's bytes in one encoding, with their ETag. */
export interface Representation {
  readonly bytes: Buffer;
  readonly etag: string;
  readonly encoding: Encoding | undefined;
}

const variants = new WeakMap<CachedAnswer, Partial<Record<Encoding, Representation>>>();

/**
 * The encoding to send for an Accept-Encoding header: brotli before gzip when both are acceptable (it
 * is about a fifth smaller on JSON), none when neither is. `q=0` refuses a coding.
 */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [coding, ...params] = part.split(';').map((p) => p.trim());
    const weight = params.map((p) => /^q\s*=\s*([\d.]+)$/.exec(p)).find(Boolean);
    if (coding) q.set(coding, weight ? Number(weight[1]) : 1);
  }
  const star = q.get('*') ?? 0;
  const br = q.get('br') ?? star;
  const gzip = q.get('gzip') ?? q.get('x-gzip') ?? star;
  if (br > 0 && br >= gzip) return 'br';
  return gzip > 0 ? 'gzip' : undefined;
}

/** True when the answer is big enough to be sent compressed to a client that accepts it. */
export function compressible(answer: CachedAnswer): boolean {
  return answer.status === 200 && answer.bytes.length > MIN_BYTES;
}

/** The representation of `answer` to send for the chosen encoding. */
export function representationOf(answer: CachedAnswer, encoding: Encoding | undefined): Representation {
  if (!encoding || !compressible(answer)) return { bytes: answer.bytes, etag: answer.etag, encoding: undefined };
  let cache = variants.get(answer);
  if (!cache) variants.set(answer, (cache = {}));
  let variant = cache[encoding];
  if (!variant) {
    const bytes =
      encoding === 'br'
        ? brotliCompressSync(answer.bytes, {
            params: {
              [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
              [constants.BROTLI_PARAM_QUALITY]: 9,
              [constants.BROTLI_PARAM_SIZE_HINT]: answer.bytes.length,
            },
          })
        : gzipSync(answer.bytes, { level: 9 });
    variant = cache[encoding] = { bytes, etag: `${answer.etag.slice(0, -1)}.${encoding === 'br' ? 'br' : 'gz'}"`, encoding };
  }
  return variant;
}
