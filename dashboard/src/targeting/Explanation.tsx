import { Link } from 'wouter';

// The playground's answer: per flag, what OFREP would answer (value, variant, reason) and why.

export interface PlaygroundEvaluation {
  key: string;
  value?: unknown;
  variant?: string;
  reason: string;
  errorCode?: string;
  errorDetails?: string;
  metadata?: Record<string, unknown>;
}

export interface PlaygroundAnswer {
  evaluations: PlaygroundEvaluation[];
  explanations?: unknown;
}

const REASON_TEXT: Record<string, string> = {
  STATIC: 'no rules: the default serve',
  TARGETING_MATCH: 'a rule matched',
  SPLIT: 'a rule matched and its split chose the bucket',
  DEFAULT: 'rules exist, none matched: the default serve',
  DISABLED: 'the flag is disabled: no value',
  ERROR: 'the evaluation failed',
};

/** The explanation of one flag, wherever the answer keeps it (a list with keys, or an object by key). */
function explanationOf(all: unknown, key: string): unknown {
  if (Array.isArray(all)) return all.find((e) => e && typeof e === 'object' && (e as { key?: unknown }).key === key);
  if (all && typeof all === 'object') return (all as Record<string, unknown>)[key];
  return undefined;
}

export function Explanation({ answer, projectKey }: { answer: PlaygroundAnswer; projectKey: string }) {
  if (answer.evaluations.length === 0) return <p className="muted">No flag to evaluate.</p>;
  return (
    <>
      {answer.evaluations.map((e) => (
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
          <Why explanation={explanationOf(answer.explanations, e.key)} />
        </article>
      ))}
    </>
  );
}

function Why({ explanation }: { explanation: unknown }) {
  if (explanation === undefined || explanation === null) return null;
  return (
    <div className="explain">
      <h4>Why</h4>
      <Tree value={explanation} />
    </div>
  );
}

/** Any JSON as nested lists: keys in words, true/false as matched/failed. */
function Tree({ value }: { value: unknown }) {
  if (Array.isArray(value))
    return (
      <ol>
        {value.map((v, i) => (
          <li key={i}>
            <Tree value={v} />
          </li>
        ))}
      </ol>
    );
  if (value && typeof value === 'object')
    return (
      <ul className="plain">
        {Object.entries(value as Record<string, unknown>).map(([k, v]) => (
          <li key={k}>
            <strong>{k}</strong>: <Tree value={v} />
          </li>
        ))}
      </ul>
    );
  if (typeof value === 'boolean') return <span className={value ? 'pass' : 'fail'}>{value ? 'yes' : 'no'}</span>;
  return <code>{JSON.stringify(value)}</code>;
}
