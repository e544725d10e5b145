import { Link } from 'wouter';
import type { Condition } from '../api.ts';
import { describeCondition } from './conditions.ts';

// The playground's answer: per flag, what OFREP would answer (value, variant, reason) and why.

/** Why a flag answered what it did (docs/api.md, "Playground"); null for a flag without targeting. */
export interface FlagExplanation {
  matchedRuleId?: string;
  prerequisites: Array<{ flag: string; variants: string[]; variant?: string; held: boolean }>;
  rules: Array<{
    id: string;
    name: string;
    enabled: boolean;
    held: boolean;
    conditions: Array<{ condition: Condition; held: boolean }>;
    segments: Array<{ key: string; held: boolean; conditions: Array<{ condition: Condition; held: boolean }> }>;
    split?: { bucketBy: string; totalWeight: number; bucket?: number; variant?: string };
  }>;
  jsonLogic: boolean;
}

/** One flag's answer for the context, as OFREP would give it, with its explanation. */
export interface PlaygroundResult {
  key: string;
  value?: unknown;
  variant?: string;
  reason: string;
  errorCode?: string;
  errorDetails?: string;
  metadata: Record<string, string | number | boolean>;
  explanation: FlagExplanation | null;
}

export interface PlaygroundAnswer {
  flags: PlaygroundResult[];
}

const REASON_TEXT: Record<string, string> = {
  STATIC: 'no rules: the default serve',
  TARGETING_MATCH: 'a rule matched',
  SPLIT: 'a rule matched and its split chose the bucket',
  DEFAULT: 'no rule served: the default serve',
  DISABLED: 'the flag is disabled: no value',
  ERROR: 'the evaluation failed',
};

export function Explanation({ answer, projectKey }: { answer: PlaygroundAnswer; projectKey: string }) {
  if (answer.flags.length === 0) return <p className="muted">No flag to evaluate.</p>;
  return (
    <>
      {answer.flags.map((e) => (
        <article key={e.key} className="evaluation" aria-labelledby={`eval-${e.key}`}>
          <h3 id={`eval-${e.key}`}>
            <Link href={`/projects/${projectKey}/flags/${encodeURIComponent(e.key)}`}>{e.key}</Link>
          </h3>
          <dl>
            <div className="pair">
              <dt>Value</dt>
              <dd>{e.value === undefined ? <span className="muted">none (the caller's default applies)</span> : <code>{JSON.stringify(e.value)}</code>}</dd>
            </div>
            <div className="pair">
              <dt>Variant</dt>
              <dd>{e.variant ?? <span className="muted">none</span>}</dd>
            </div>
            <div className="pair">
              <dt>Reason</dt>
              <dd>
                <code>{e.reason}</code> {REASON_TEXT[e.reason] && <span className="muted">({REASON_TEXT[e.reason]})</span>}
                {e.errorCode && (
                  <>
                    {' '}
                    <code>{e.errorCode}</code> {e.errorDetails}
                  </>
                )}
              </dd>
            </div>
            {e.metadata && Object.keys(e.metadata).length > 0 && (
              <div className="pair">
                <dt>Metadata</dt>
                <dd>
                  {Object.entries(e.metadata).map(([k, v]) => (
                    <span key={k}>
                      <code>
                        {k}: {String(v)}
                      </code>{' '}
                    </span>
                  ))}
                </dd>
              </div>
            )}
          </dl>
          <Why result={e} />
        </article>
      ))}
    </>
  );
}

/** A check's outcome in words (and colour): "holds" or "fails". */
const Outcome = ({ held, yes = 'holds', no = 'fails' }: { held: boolean; yes?: string; no?: string }) => (
  <span className={held ? 'pass' : 'fail'}>{held ? yes : no}</span>
);

function Conditions({ list }: { list: Array<{ condition: Condition; held: boolean }> }) {
  return (
    <ul className="plain">
      {list.map((c, i) => (
        <li key={i}>
          <Outcome held={c.held} /> <code>{describeCondition(c.condition)}</code>
        </li>
      ))}
    </ul>
  );
}

/**
 * Why a rule that matched did not serve (issue 31 item 6): an earlier rule served, its split found no
 * bucket (the context lacks the attribute it splits by, so the evaluation went on to the default serve),
 * or a prerequisite failed. Said only when it is so.
 */
function heldNotServed(e: FlagExplanation, r: FlagExplanation['rules'][number]): string {
  if (e.matchedRuleId) return 'matched, but an earlier rule served';
  if (r.split && r.split.bucket === undefined) return `matched, but served nothing: the context has no ${r.split.bucketBy} to split by`;
  if (e.prerequisites.some((p) => !p.held)) return 'matched, but not served (a prerequisite failed)';
  return 'matched, but not served';
}

function Why({ result }: { result: PlaygroundResult }) {
  const e = result.explanation;
  if (e === null) {
    if (result.reason === 'STATIC' || result.reason === 'DISABLED' || result.reason === 'ERROR') return null;
    return <p className="muted">Not explained in an evaluation of all flags: choose this flag alone to see why.</p>;
  }
  return (
    <div className="explain">
      <h4>Why</h4>
      {e.jsonLogic && <p>The flag's targeting is imported JSON Logic: it is evaluated as a whole, without a rule-by-rule explanation.</p>}
      {e.prerequisites.length > 0 && (
        <>
          <p>Prerequisites:</p>
          <ul className="plain">
            {e.prerequisites.map((p) => (
              <li key={p.flag}>
                <Outcome held={p.held} /> <code>{p.flag}</code> served {p.variant ?? 'no variant'}; needed one of {p.variants.join(', ')}
              </li>
            ))}
          </ul>
        </>
      )}
      {e.rules.length === 0 && !e.jsonLogic && <p>No rule: the default serve.</p>}
      {e.rules.length > 0 && (
        <ol>
          {e.rules.map((r, i) => {
            const served = r.id === e.matchedRuleId;
            return (
              <li key={r.id}>
                <strong>{r.name || `Rule ${i + 1}`}</strong>:{' '}
                {!r.enabled ? (
                  <span className="muted">switched off, skipped</span>
                ) : served ? (
                  <span className="pass">matched and served</span>
                ) : r.held ? (
                  <span className="muted">{heldNotServed(e, r)}</span>
                ) : (
                  <span className="fail">did not match</span>
                )}
                {r.conditions.length > 0 && <Conditions list={r.conditions} />}
                {r.segments.map((s) => (
                  <div key={s.key}>
                    <Outcome held={s.held} yes="in segment" no="not in segment" /> <code>{s.key}</code>
                    <Conditions list={s.conditions} />
                  </div>
                ))}
                {r.split && (
                  <p>
                    Split by <code>{r.split.bucketBy}</code>:{' '}
                    {r.split.bucket === undefined
                      ? 'the attribute is missing, so no bucket (no variant)'
                      : `bucket ${r.split.bucket} of ${r.split.totalWeight}, which is variant ${r.split.variant ?? 'none'}`}
                  </p>
                )}
              </li>
            );
          })}
        </ol>
      )}
      {!e.jsonLogic && e.rules.length > 0 && e.matchedRuleId === undefined && <p>No rule served: the default serve applies.</p>}
    </div>
  );
}
