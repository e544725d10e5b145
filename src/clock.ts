/**
 * The clock port: every service, job and loop reads the time through one (`compose()` passes
 * `Ports.clock`, the system clock unless a test gives its own), and so does the targeting engine, whose
 * extension conditions compare with `now` (the read path and the playground pass the same clock).
 * Timers (`setTimeout`) measure intervals, not the time, and stay on the event loop's clock.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
