export const MOODS = ['VERY_SAD', 'SAD', 'NEUTRAL', 'HAPPY', 'VERY_HAPPY'] as const;
export type Mood = (typeof MOODS)[number];

export const DESCRIPTION_MAX = 2000;

export interface FeedbackInput {
  flagKey: string;
  mood: Mood;
  rating: number;
  description?: string;
  metadata?: Record<string, unknown>;
}

/** Stored preview feedback (contract D10). */
export interface Feedback {
  id: string;
  projectId: string;
  environmentId: string;
  flagKey: string;
  mood: Mood;
  rating: number;
  description: string | null;
  metadata: Record<string, unknown> | null;
  createdAt: string;
}

/** Over all of a flag's feedback in one environment. */
export interface FeedbackSummary {
  total: number;
  /** Rounded to two decimals; null without feedback. */
  averageRating: number | null;
  /** Entries per mood; moods without entries are 0. */
  moods: Record<Mood, number>;
}

export const feedbackView = (f: Feedback) => ({
  id: f.id,
  flagKey: f.flagKey,
  mood: f.mood,
  rating: f.rating,
  description: f.description,
  metadata: f.metadata,
  createdAt: f.createdAt,
});
