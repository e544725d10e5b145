// What looks like a secret in an uploaded line is replaced by REDACTED before the line leaves the
// machine (ADR 0023): the lines go to Flagpost and are shown in its dashboard, where a key has no
// business. The rules lean towards redacting; the reference (file and line) is kept in any case. Text
// listed in `keep` (the slug found on the line) is never redacted.

export const REDACTED = '[redacted]';

/** Tokens with a prefix that says what they are: Flagpost's own and the common providers'. */
const PREFIXED =
  /(?:\b(?:fpa|fpt|fpi|whsec|ghp|gho|ghu|ghs|ghr|github_pat|glpat|npm|sk_live|rk_live|sk_test|rk_test|pk_live|xox[abposr])[_-][A-Za-z0-9_-]{8,}|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b|\bAIza[A-Za-z0-9_-]{30,}|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*)/g;

const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----/;

/** Words of an identifier that make its value a secret wherever they stand (`SECRET_KEY_BASE`, `tokenUrl`). */
const SECRET_WORDS = new Set(['secret', 'secrets', 'token', 'password', 'passwd', 'pwd', 'credential', 'credentials', 'apikey', 'privatekey']);
/** Words that do so as the last word only (`apiKey`, `x-auth`, not `keyId` nor `authorName`). */
const SECRET_LAST_WORDS = new Set(['key', 'auth']);
const NAME = String.raw`[A-Za-z_][A-Za-z0-9_.-]*`;

/** Whether an identifier names a secret: `API_KEY`, `apiKey`, `client-secret`, `token`; not `keyboard`, `monkey`. */
export function isSecretName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[_.-]+/)
    .filter((w) => w !== '');
  return words.some((w) => SECRET_WORDS.has(w)) || SECRET_LAST_WORDS.has(words[words.length - 1] ?? '');
}

/** `name = "value"`, `"name": 'value'`, `name: \`value\``: a quoted value after a secret-sounding name, anywhere. */
const QUOTED_ASSIGNMENT = new RegExp(String.raw`(["']?)(${NAME})\1(\s*[:=]\s*)(["'\x60])([^"'\x60]+)\4`, 'g');
/** `NAME=value`, `export NAME=value`, `name: value` at the start of a line (.env, shell, YAML). */
const BARE_ASSIGNMENT = new RegExp(String.raw`^(\s*(?:export\s+|-\s+)?)(${NAME})(\s*[:=]\s*)([^\s"'\x60#]+)`);

/** A run of base64 or hex characters long and mixed enough to be a key rather than a word. */
const OPAQUE_RUN = /[A-Za-z0-9+/]{20,}={0,2}/g;
const MIN_ENTROPY_BITS = 3.5;

function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / text.length) * Math.log2(n / text.length);
  return bits;
}

function looksOpaque(run: string): boolean {
  const digits = run.replace(/[^0-9]/g, '').length;
  const letters = run.replace(/[^A-Za-z]/g, '').length;
  return digits >= 2 && letters >= 2 && entropy(run) >= MIN_ENTROPY_BITS;
}

/** The line with secret-looking values replaced by REDACTED. */
export function redactSecrets(line: string, keep: readonly string[] = []): string {
  if (PRIVATE_KEY.test(line)) return REDACTED;
  const kept = (text: string) => keep.some((k) => k !== '' && text.includes(k));
  const hide = (text: string) => (kept(text) ? text : REDACTED);
  let out = line.replace(PREFIXED, (token) => hide(token));
  out = out.replace(QUOTED_ASSIGNMENT, (all, q: string, name: string, sep: string, quote: string, value: string) =>
    isSecretName(name) && !kept(value) ? `${q}${name}${q}${sep}${quote}${REDACTED}${quote}` : all,
  );
  out = out.replace(BARE_ASSIGNMENT, (all, lead: string, name: string, sep: string, value: string) =>
    isSecretName(name) && !kept(value) && value !== REDACTED ? `${lead}${name}${sep}${REDACTED}` : all,
  );
  return out.replace(OPAQUE_RUN, (run) => (looksOpaque(run) ? hide(run) : run));
}
