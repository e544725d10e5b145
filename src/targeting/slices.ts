// Long checks as steps (generators that yield between units of work: one flag), so that a large
// import can be validated in slices between turns of the event loop instead of holding it for a
// second or more (issue 29). `drain` runs the steps at once, as the synchronous checks always did.

/** Work done in steps: each `yield` is a point where it may pause; the return value is the result. */
export type Steps<T> = Generator<void, T, void>;

/** Runs every step now and answers the result. */
export function drain<T>(steps: Steps<T>): T {
  let next = steps.next();
  while (!next.done) next = steps.next();
  return next.value;
}

/** Milliseconds of steps run before the event loop gets a turn. */
const SLICE_MS = 10;

/** Runs the steps in slices of about SLICE_MS, giving the event loop a turn between slices. */
export async function inSlices<T>(steps: Steps<T>): Promise<T> {
  let started = performance.now();
  let next = steps.next();
  while (!next.done) {
    if (performance.now() - started >= SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      started = performance.now();
    }
    next = steps.next();
  }
  return next.value;
}
