// The Unleash formats Flagpost imports (issue 21), read into one model. Pure. Two shapes exist:
// - the client API's state (`GET /api/client/features`, and the client specification's `state`):
//   `{version, features: [{name, enabled, strategies, variants, dependencies}], segments}`, the
//   configuration of one environment;
// - the admin export (`/api/admin/features-batch/export`, and the older `/api/admin/state/export`):
//   `{features, featureStrategies, featureEnvironments, segments, dependencies, featureStrategySegments?}`,
//   strategies and switches per environment.

export interface UnleashConstraint {
  contextName: string;
  operator: string;
  values: string[];
  value?: string;
  inverted: boolean;
  caseInsensitive: boolean;
}

export interface UnleashVariant {
  name: string;
  weight: number;
  stickiness?: string;
  payload?: { type: string; value: string };
  overrides: Array<{ contextName: string; values: string[] }>;
}

export interface UnleashStrategy {
  name: string;
  title?: string;
  parameters: Record<string, string>;
  constraints: UnleashConstraint[];
  segments: number[];
  variants: UnleashVariant[];
}

export interface UnleashFeatureEnvironment {
  enabled: boolean;
  strategies: UnleashStrategy[];
  variants: UnleashVariant[];
}

export interface UnleashDependency {
  feature: string;
  enabled: boolean;
  variants: string[];
}

export interface UnleashFeature {
  name: string;
  description: string;
  environments: Map<string, UnleashFeatureEnvironment>;
  dependencies: UnleashDependency[];
}

export interface UnleashSegment {
  id: number;
  name: string;
  constraints: UnleashConstraint[];
}

export interface UnleashModel {
  environments: string[];
  features: UnleashFeature[];
  segments: Map<number, UnleashSegment>;
}

/** A problem of the input's shape: where (a JSON pointer) and what. */
export class UnleashFormatError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined);

function list(v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new UnleashFormatError(path, 'must be an array');
  return v;
}

function object(v: unknown, path: string): Json {
  if (!isObject(v)) throw new UnleashFormatError(path, 'must be an object');
  return v;
}

function name(v: unknown, path: string): string {
  if (typeof v !== 'string' || v === '') throw new UnleashFormatError(path, 'must be a non-empty string');
  return v;
}

function constraint(v: unknown, path: string): UnleashConstraint {
  const c = object(v, path);
  return {
    contextName: name(c.contextName, `${path}/contextName`),
    operator: name(c.operator, `${path}/operator`),
    values: list(c.values, `${path}/values`).flatMap((x) => text(x) ?? []),
    ...(text(c.value) !== undefined ? { value: text(c.value)! } : {}),
    inverted: c.inverted === true,
    caseInsensitive: c.caseInsensitive === true,
  };
}

function variant(v: unknown, path: string): UnleashVariant {
  const o = object(v, path);
  const payload = isObject(o.payload) && typeof o.payload.type === 'string' ? { type: o.payload.type, value: text(o.payload.value) ?? '' } : undefined;
  return {
    name: name(o.name, `${path}/name`),
    weight: typeof o.weight === 'number' && Number.isFinite(o.weight) ? o.weight : Number(o.weight ?? 0) || 0,
    ...(typeof o.stickiness === 'string' ? { stickiness: o.stickiness } : {}),
    ...(payload ? { payload } : {}),
    overrides: list(o.overrides, `${path}/overrides`).map((x, i) => {
      const ov = object(x, `${path}/overrides/${i}`);
      return {
        contextName: name(ov.contextName, `${path}/overrides/${i}/contextName`),
        values: list(ov.values, `${path}/overrides/${i}/values`).flatMap((y) => text(y) ?? []),
      };
    }),
  };
}

function strategy(v: unknown, path: string): UnleashStrategy {
  const s = object(v, path);
  const parameters = Object.create(null) as Record<string, string>;
  if (isObject(s.parameters)) for (const [k, p] of Object.entries(s.parameters)) if (text(p) !== undefined) parameters[k] = text(p)!;
  return {
    name: name(s.name ?? s.strategyName, `${path}/name`),
    ...(typeof s.title === 'string' && s.title !== '' ? { title: s.title } : {}),
    parameters,
    constraints: list(s.constraints, `${path}/constraints`).map((c, i) => constraint(c, `${path}/constraints/${i}`)),
    segments: list(s.segments, `${path}/segments`).flatMap((x) => (typeof x === 'number' ? [x] : [])),
    variants: list(s.variants, `${path}/variants`).map((x, i) => variant(x, `${path}/variants/${i}`)),
  };
}

function dependencies(v: unknown, path: string): UnleashDependency[] {
  return list(v, path).map((d, i) => {
    const o = object(d, `${path}/${i}`);
    return {
      feature: name(o.feature, `${path}/${i}/feature`),
      enabled: o.enabled !== false,
      variants: list(o.variants, `${path}/${i}/variants`).flatMap((x) => text(x) ?? []),
    };
  });
}

function segments(v: unknown): Map<number, UnleashSegment> {
  const out = new Map<number, UnleashSegment>();
  list(v, '/segments').forEach((s, i) => {
    const o = object(s, `/segments/${i}`);
    if (typeof o.id !== 'number') throw new UnleashFormatError(`/segments/${i}/id`, 'must be a number');
    out.set(o.id, {
      id: o.id,
      name: typeof o.name === 'string' && o.name !== '' ? o.name : `segment-${o.id}`,
      constraints: list(o.constraints, `/segments/${i}/constraints`).map((c, j) => constraint(c, `/segments/${i}/constraints/${j}`)),
    });
  });
  return out;
}

/**
 * Reads an Unleash client state or admin export. `environment` names the environment of a client state
 * (which has none of its own) and of an export whose strategies and switches do not name one.
 */
export function readUnleash(input: unknown, environment: string): UnleashModel {
  const doc = object(input, '');
  if (doc.featureStrategies !== undefined || doc.featureEnvironments !== undefined) return readExport(doc, environment);
  if (!Array.isArray(doc.features)) {
    throw new UnleashFormatError(
      '/features',
      'an Unleash client state ({version, features, segments}) or admin export ({features, featureStrategies, featureEnvironments, ...})',
    );
  }
  const features = doc.features.map((f, i): UnleashFeature => {
    const o = object(f, `/features/${i}`);
    const env: UnleashFeatureEnvironment = {
      enabled: o.enabled === true,
      strategies: list(o.strategies, `/features/${i}/strategies`).map((s, j) => strategy(s, `/features/${i}/strategies/${j}`)),
      variants: list(o.variants, `/features/${i}/variants`).map((v, j) => variant(v, `/features/${i}/variants/${j}`)),
    };
    return {
      name: name(o.name, `/features/${i}/name`),
      description: typeof o.description === 'string' ? o.description : '',
      environments: new Map([[environment, env]]),
      dependencies: dependencies(o.dependencies, `/features/${i}/dependencies`),
    };
  });
  return { environments: [environment], features, segments: segments(doc.segments) };
}

function readExport(doc: Json, fallbackEnvironment: string): UnleashModel {
  const features = new Map<string, UnleashFeature>();
  const featureVariants = new Map<string, UnleashVariant[]>();
  list(doc.features, '/features').forEach((f, i) => {
    const o = object(f, `/features/${i}`);
    const featureName = name(o.name, `/features/${i}/name`);
    features.set(featureName, {
      name: featureName,
      description: typeof o.description === 'string' ? o.description : '',
      environments: new Map(),
      dependencies: dependencies(o.dependencies, `/features/${i}/dependencies`),
    });
    // Older exports keep the variants on the feature, for every environment.
    featureVariants.set(
      featureName,
      list(o.variants, `/features/${i}/variants`).map((v, j) => variant(v, `/features/${i}/variants/${j}`)),
    );
  });
  const environments: string[] = [];
  const envOf = (v: unknown) => {
    const env = typeof v === 'string' && v !== '' ? v : fallbackEnvironment;
    if (!environments.includes(env)) environments.push(env);
    return env;
  };
  const slot = (featureName: string, env: string, path: string): UnleashFeatureEnvironment => {
    const feature = features.get(featureName);
    if (!feature) throw new UnleashFormatError(path, `names the feature ${featureName}, which is not in features`);
    let e = feature.environments.get(env);
    if (!e) feature.environments.set(env, (e = { enabled: false, strategies: [], variants: featureVariants.get(featureName) ?? [] }));
    return e;
  };
  list(doc.featureEnvironments, '/featureEnvironments').forEach((fe, i) => {
    const o = object(fe, `/featureEnvironments/${i}`);
    const e = slot(name(o.featureName, `/featureEnvironments/${i}/featureName`), envOf(o.environment), `/featureEnvironments/${i}`);
    e.enabled = o.enabled === true;
    if (Array.isArray(o.variants)) e.variants = o.variants.map((v, j) => variant(v, `/featureEnvironments/${i}/variants/${j}`));
  });
  // Strategy-segment links of the older state export, by strategy id.
  const linked = new Map<string, number[]>();
  list(doc.featureStrategySegments, '/featureStrategySegments').forEach((l, i) => {
    const o = object(l, `/featureStrategySegments/${i}`);
    const id = text(o.featureStrategyId);
    if (id !== undefined && typeof o.segmentId === 'number') linked.set(id, [...(linked.get(id) ?? []), o.segmentId]);
  });
  const strategies = list(doc.featureStrategies, '/featureStrategies').map((s, i) => ({ o: object(s, `/featureStrategies/${i}`), i }));
  strategies.sort((a, b) => Number(a.o.sortOrder ?? 0) - Number(b.o.sortOrder ?? 0) || a.i - b.i);
  for (const { o, i } of strategies) {
    if (o.disabled === true) continue;
    const e = slot(name(o.featureName, `/featureStrategies/${i}/featureName`), envOf(o.environment), `/featureStrategies/${i}`);
    const s = strategy(o, `/featureStrategies/${i}`);
    const id = text(o.id);
    if (s.segments.length === 0 && id !== undefined) s.segments = linked.get(id) ?? [];
    e.strategies.push(s);
  }
  for (const [i, d] of list(doc.dependencies, '/dependencies').entries()) {
    const o = object(d, `/dependencies/${i}`);
    const child = features.get(name(o.feature, `/dependencies/${i}/feature`));
    if (child) child.dependencies.push(...dependencies(o.dependencies, `/dependencies/${i}/dependencies`));
  }
  if (environments.length === 0) environments.push(fallbackEnvironment);
  return { environments, features: [...features.values()], segments: segments(doc.segments) };
}
