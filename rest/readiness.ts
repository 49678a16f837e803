/**
 * `/readyz`'s answer from a cached probe (issue 17 item 10): the platform's readiness check writes to the record store,
 * and `/readyz` takes no token, so 1.5k requests a second from one client slowed every write from 5 to 100 ms. The
 * probe runs at most once per interval; requests meanwhile share the running check or reuse its answer. A store that
 * stops being writable still turns `/readyz` to 503, and back, within one interval.
 */

/** Least time between two starts of the underlying check, milliseconds. */
export const READINESS_INTERVAL_MS = 1000;

/**
 * Wrap `check` so it starts at most once per `intervalMs`: concurrent callers share one check in flight, and later
 * callers get its answer until it has settled and the interval since it started has passed. A check that throws counts as `false`.
 * @param now the clock, milliseconds (tests may pass their own).
 * @example const ready = cachedProbe(() => platform.ready()); await ready(); // one store check for many requests
 */
export function cachedProbe(check: () => Promise<boolean>, intervalMs = READINESS_INTERVAL_MS, now: () => number = performance.now.bind(performance)): () => Promise<boolean> {
  let latest: { startedAt: number; settled: boolean; answer: Promise<boolean> } | undefined;
  return () => {
    // A check slower than the interval is still shared: checks never pile up on a store that is already slow.
    if (latest && (!latest.settled || now() - latest.startedAt < intervalMs)) return latest.answer;
    const probe = { startedAt: now(), settled: false, answer: Promise.resolve(false) };
    probe.answer = check()
      .catch(() => false)
      .finally(() => (probe.settled = true));
    latest = probe;
    return probe.answer;
  };
}
