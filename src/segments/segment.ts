import type { Segment } from '../targeting/targeting.ts';

/** A segment as stored: the engine's `Segment` with its project and timestamps. */
export interface StoredSegment extends Segment {
  id: string;
  projectId: string;
  createdAt: string;
  updatedAt: string;
  /** Incremented by every write; change requests are based on one (issue 24). */
  version: number;
}

/** Writable fields of a segment, as sent by the admin API; absent means "keep". */
export interface SegmentValues {
  name?: string;
  description?: string;
  match?: Segment['match'];
  conditions?: Segment['conditions'];
}

/** As the engine's SEGMENT_KEY: keys are `$ref`s in flagd definitions, so no quotes or spaces. */
export const SEGMENT_KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$';
export const SEGMENT_KEY_MAX_LENGTH = 100;

/** Applies PATCH semantics of the admin API to a segment. */
export function applySegmentValues(segment: StoredSegment, values: SegmentValues, updatedAt: string): StoredSegment {
  const next = { ...segment, updatedAt };
  if (values.name !== undefined) next.name = values.name;
  if (values.description !== undefined) next.description = values.description;
  if (values.match !== undefined) next.match = values.match;
  if (values.conditions !== undefined) next.conditions = values.conditions;
  return next;
}

/** The engine's view of a stored segment. */
export const engineSegment = (s: StoredSegment): Segment => ({
  key: s.key,
  name: s.name,
  description: s.description,
  match: s.match,
  conditions: s.conditions,
});

/** The admin API's view of a segment. */
export const segmentView = (s: StoredSegment) => ({ ...engineSegment(s), createdAt: s.createdAt, updatedAt: s.updatedAt, version: s.version });

/** What a change sets of a segment (issue 24): its whole definition. */
export const segmentConfig = (s: StoredSegment): Required<SegmentValues> => ({
  name: s.name,
  description: s.description,
  match: s.match,
  conditions: s.conditions,
});
