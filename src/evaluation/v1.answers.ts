import { message } from '../errors.ts';
import { type Flag, listedFlag, previewFlag, publicFlag } from '../flags/flag.ts';
import { answer, answerOfBody, type CachedAnswer } from './cached-answer.ts';
import { type CountedReason, REASON_SLOT, type ReasonCounts, reasonCounts } from './flag-usage-tally.ts';

// The answer cache of the `/v1` read surface (GET /v1/flags, /v1/flags/{slug}, /v1/flags/preview) of one
// environment snapshot (flag.snapshot.ts). `/v1` never evaluates: a flag with rules shows its default
// serve (docs/adr/0025), so every answer is the same for every caller and is built once per snapshot:
// the list when the snapshot is built, a single flag on its first read, the preview list once the
// preview renderer is loaded. A flag's list element is kept per Flag object (the store hands back the
// same object for an unchanged row, docs/adr/0028), and a single flag's answer per Flag too.

/** A GET /v1/flags/{slug} answer, with the reason slot it is counted with (v1ReasonOf). */
export interface FlagAnswer extends CachedAnswer {
  readonly reason: number;
}

/** The `/v1` answers of one snapshot. */
export interface V1Answers {
  /** GET /v1/flags/{slug} by slug, serialized on a slug's first read (most of a large environment's flags are never read alone). */
  readonly single: SingleAnswers;
  readonly list: CachedAnswer;
  /** What a read of the list counts as, by reason (v1ReasonOf of each flag); previewReasons likewise for the preview list. */
  readonly listReasons: ReasonCounts;
  readonly previewReasons: ReasonCounts;
  /**
   * GET /flags/preview, once built. Rendering preview content needs the preview renderer, which is
   * loaded on first use, so an environment with preview flags builds this answer on its first preview
   * read (FlagReadModel.preview), not when its flags are loaded.
   */
  preview: CachedAnswer | undefined;
  readonly previewFlags: readonly Flag[];
}

/**
 * The reason a `/v1` read of a flag is counted with (metrics): `/v1` never evaluates, it serves the
 * default serve (docs/adr/0025), so STATIC, or DISABLED for a flag switched off in flagd's sense (the
 * reason OFREP answers it with too).
 */
export function v1ReasonOf(flag: Flag): CountedReason {
  return flag.targeting.state === 'DISABLED' ? 'DISABLED' : 'STATIC';
}

/** The single-flag answers of a snapshot, each serialized once, on its first read (or kept from the last snapshot for the same Flag). */
export class SingleAnswers {
  private readonly answers = new Map<string, { flag: Flag; answer: FlagAnswer }>();

  /** `previous`: the last snapshot's answers, whose unchanged flags' answers are taken over (copied: no chain of snapshots is kept alive). */
  constructor(
    private readonly bySlug: ReadonlyMap<string, Flag>,
    previous?: SingleAnswers,
  ) {
    if (previous) for (const [slug, known] of previous.answers) if (bySlug.get(slug) === known.flag) this.answers.set(slug, known);
  }

  get(slug: string): FlagAnswer | undefined {
    let cached = this.answers.get(slug);
    if (cached) return cached.answer;
    const flag = this.bySlug.get(slug);
    if (!flag) return undefined;
    cached = { flag, answer: { ...answer(200, publicFlag(flag)), reason: REASON_SLOT[v1ReasonOf(flag)] } };
    this.answers.set(slug, cached);
    return cached.answer;
  }
}

/** Each flag's element of GET /v1/flags, as JSON, kept as long as the Flag object. */
const listedOfFlag = new WeakMap<Flag, string>();

function listedOf(flag: Flag): string {
  let listed = listedOfFlag.get(flag);
  if (listed === undefined) {
    listed = JSON.stringify(listedFlag(flag));
    listedOfFlag.set(flag, listed);
  }
  return listed;
}

/**
 * The `/v1` answers of an environment's flags (newest first). `render` turns preview content into HTML;
 * without it, the preview answer is left to build later. `previous`: the answers of the snapshot this
 * one replaces, whose single-flag answers of unchanged flags are kept.
 */
export function buildV1Answers(flags: readonly Flag[], render: ((doc: unknown) => string) | undefined, previous?: V1Answers): V1Answers {
  const bySlug = new Map<string, Flag>();
  const listed: string[] = [];
  for (const flag of flags) {
    bySlug.set(flag.slug, flag);
    listed.push(listedOf(flag));
  }
  const previewFlags = flags.filter((f) => f.isPreview);
  return {
    single: new SingleAnswers(bySlug, previous?.single),
    list: answerOfBody(200, `{"flags":[${listed.join(',')}]}`),
    listReasons: reasonCounts(flags.map(v1ReasonOf)),
    previewReasons: reasonCounts(previewFlags.map(v1ReasonOf)),
    preview: previewFlags.length === 0 || render ? previewAnswer(previewFlags, render ?? (() => '')) : undefined,
    previewFlags,
  };
}

/** The single-flag 404 of the specification (enabled:false so clients treat the flag as off). */
export function flagNotFoundAnswer(slug: string): CachedAnswer {
  return answer(404, { enabled: false, error: true, message: message('flagNotFound', { slug }) });
}

export function previewAnswer(previewFlags: readonly Flag[], render: (doc: unknown) => string): CachedAnswer {
  return answer(200, { flags: previewFlags.map((f) => previewFlag(f, render(f.previewContent))) });
}
