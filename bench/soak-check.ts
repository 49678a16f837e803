/**
 * The soak's arithmetic and checks (`bench/soak.ts`), apart from the processes it starts so they can be tested alone
 * (`test/bench/soak-check.test.ts`): percentiles, the RSS slope and its window, reading pds's settlement log lines, and
 * the exactly-once settlement check across pds processes.
 */

/** The RSS slope the soak holds pds to after its window starts, MiB per minute (issue 23 item 4). */
export const RSS_SLOPE_TARGET = 0.2;

/**
 * The `p`-th percentile (nearest rank) of ascending `sorted` values.
 * @returns NaN for no values.
 */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * Least-squares slope of y over x.
 * @returns NaN for fewer than two points.
 */
export function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return num / den;
}

/**
 * After which minute the RSS slope is fitted (points of later minutes only): `SOAK_SLOPE_FROM` when given, else 10 for
 * a run of 20 minutes or more (the issue's "after minute 10") and 2 for a shorter one.
 * @param seconds the measured run's length (`SOAK_DURATION`).
 * @param given `SOAK_SLOPE_FROM` as set, or undefined.
 * @throws TypeError when `given` is not a whole number ≥ 0.
 */
export function slopeFrom(seconds: number, given: string | undefined): number {
  if (given === undefined || given === '') return seconds >= 20 * 60 ? 10 : 2;
  const from = Number(given);
  if (!Number.isInteger(from) || from < 0) throw new TypeError(`SOAK_SLOPE_FROM must be a whole number of minutes ≥ 0, not ${JSON.stringify(given)}`);
  return from;
}

/**
 * The slope check of one process: its RSS (MiB) at the end of each minute after `from`.
 * @param rss MiB at the end of minute 1, 2, …; undefined where no sample was taken.
 * @returns the slope (MiB/min; NaN when fewer than two minutes follow `from`) and the minutes it spans.
 */
export function rssSlope(rss: (number | undefined)[], from: number): { slope: number; first?: number; last?: number } {
  const points = rss.flatMap((mib, i) => (i + 1 > from && mib !== undefined ? [[i + 1, mib] as [number, number]] : []));
  return { slope: slope(points), first: points[0]?.[0], last: points.at(-1)?.[0] };
}

/** What pds logs when a workflow it ran settles (`server.ts`'s onSettled: one line, in the process that settled it). */
export interface SettleLine {
  workflow: string;
  phase: string;
}

/**
 * The settlement a pds log line records, or undefined for any other line. The line is pino JSON with `workflow`,
 * `phase` and the message `workflow <name> <phase>`; step lines (`workflow <name> step i/n …`) do not count.
 */
export function settleLine(line: string): SettleLine | undefined {
  // Cheap test first: a soak's log has a line per request and only a few settlements.
  if (!line.includes('"phase":') || !line.includes('"msg":"workflow ')) return undefined;
  let entry: { workflow?: unknown; phase?: unknown; msg?: unknown };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return undefined;
  }
  const { workflow, phase, msg } = entry;
  if (typeof workflow !== 'string' || typeof phase !== 'string' || msg !== `workflow ${workflow} ${phase}`) return undefined;
  return { workflow, phase };
}

/**
 * A warning or error pds logged (pino level ≥ 40), as one summary of at most 200 characters: its message, its error
 * code, and its error's message, so that lines of one cause count together. A 5xx answer's request line is one
 * (`METHOD route status`, logged at warn or error). Undefined for any other line.
 * @example problemLine('{"level":40,"msg":"GET /api/v1/tenants/{team} 503","code":"UNAVAILABLE","err":{"message":"database busy"}}')
 *   // 'GET /api/v1/tenants/{team} 503 UNAVAILABLE: database busy'
 */
export function problemLine(line: string): string | undefined {
  if (!/^\{"level":(?:[4-9]\d|\d{3,})[,}]/.test(line)) return undefined;
  let entry: { msg?: unknown; code?: unknown; err?: { message?: unknown }; error?: unknown };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return undefined;
  }
  const cause = typeof entry.err?.message === 'string' ? entry.err.message : typeof entry.error === 'string' ? entry.error : '';
  const code = typeof entry.code === 'string' ? ` ${entry.code}` : '';
  const text = `${String(entry.msg ?? '')}${code}${cause ? `: ${cause}` : ''}`.replace(/\s+/g, ' ');
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The outcome of {@link checkSettlement}. */
export interface SettlementReport {
  /** Writes answered 2xx. */
  accepted: number;
  /** Accepted writes whose audit entry is settled (succeeded or failed), once. */
  settled: number;
  /** Accepted writes without an audit entry. */
  missing: string[];
  /** Accepted writes whose audit entry is still `submitted`. */
  unsettled: string[];
  /** Workflows with more than one audit entry, or whose settlement more than one process logged (or one, twice). */
  duplicates: { workflow: string; entries: number; settledBy: number[] }[];
  /** Settled entries of accepted writes no process logged settling. */
  unlogged: string[];
  /** Audit entries of workflows no 2xx answer named (a write whose answer was lost: a network error). */
  unanswered: string[];
  /** How many settlements each process logged (index = process number - 1). */
  perProcess: number[];
  /** Whether every accepted write settled exactly once: nothing missing, unsettled, duplicated or unlogged. */
  ok: boolean;
}

/**
 * Check that every accepted write's workflow settled exactly once across pds processes: each has one audit entry,
 * settled, and exactly one settlement line in exactly one process's log.
 * @param accepted workflow names of writes answered 2xx (setup, warm-up and measured writes alike).
 * @param entries the audit trail's rows (`audit_entries.workflow_name`, `status`).
 * @param settledBy per process (index = process number - 1), the workflows its log says it settled.
 */
export function checkSettlement(accepted: string[], entries: { workflowName: string; status: string }[], settledBy: string[][]): SettlementReport {
  const rows = new Map<string, string[]>();
  for (const e of entries) rows.set(e.workflowName, [...(rows.get(e.workflowName) ?? []), e.status]);
  const logged = new Map<string, number[]>();
  settledBy.forEach((names, p) => {
    for (const name of names) logged.set(name, [...(logged.get(name) ?? []), p + 1]);
  });
  const wanted = new Set(accepted);
  const report: SettlementReport = {
    accepted: wanted.size,
    settled: 0,
    missing: [],
    unsettled: [],
    duplicates: [],
    unlogged: [],
    unanswered: [...rows.keys()].filter((name) => !wanted.has(name)),
    perProcess: settledBy.map((names) => names.length),
    ok: false,
  };
  for (const name of wanted) {
    const statuses = rows.get(name);
    const by = logged.get(name) ?? [];
    if (!statuses) {
      report.missing.push(name);
      continue;
    }
    if (statuses.length > 1 || by.length > 1) report.duplicates.push({ workflow: name, entries: statuses.length, settledBy: by });
    if (statuses.every((s) => s === 'submitted')) report.unsettled.push(name);
    else if (by.length === 0) report.unlogged.push(name);
    else if (statuses.length === 1 && by.length === 1) report.settled++;
  }
  report.ok = report.missing.length === 0 && report.unsettled.length === 0 && report.duplicates.length === 0 && report.unlogged.length === 0;
  return report;
}

/**
 * Which C library the running Node binary uses, from its diagnostic report's header (`glibcVersionRuntime`, set only on
 * glibc): `glibc <version>`, or `not glibc (musl or another libc)`. pds's processes are forked from the same binary.
 * @param header `process.report.getReport().header`.
 */
export function libcOf(header: { glibcVersionRuntime?: string } | undefined): string {
  return header?.glibcVersionRuntime ? `glibc ${header.glibcVersionRuntime}` : 'not glibc (musl or another libc)';
}
