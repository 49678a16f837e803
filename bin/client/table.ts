/**
 * Tables for people as `gh` and `kubectl` print them: a header row of upper-case titles, columns separated by two
 * spaces, no borders and no row separators. A table wider than the terminal (`process.stdout.columns`, else
 * `COLUMNS`) has its widest columns cut with `…` until it fits; `-o wide` prints every cell in full. Colour (phase,
 * health) only when stdout is a terminal and `NO_COLOR` is unset (https://no-color.org), so redirected output never
 * carries escape codes.
 */
import { styleText } from 'node:util';

/** A cell's colour, by meaning: done and well, under way, broken. */
export type Tone = 'green' | 'yellow' | 'red';

/** A table cell: text, or text with a colour. `undefined` prints as an empty cell. */
export type Cell = string | number | boolean | undefined | { text: string; tone?: Tone };

/** Columns never cut narrower than this many characters (or their title, when shorter). */
const MIN_COLUMN = 6;
const GAP = '  ';

/** Colour on stdout: a terminal, and `NO_COLOR` unset or empty. */
export function stdoutColour(env: NodeJS.ProcessEnv = process.env, stdout: { isTTY?: boolean } = process.stdout): boolean {
  return Boolean(stdout.isTTY && !env.NO_COLOR);
}

/** The terminal's width in columns: `process.stdout.columns`, else `COLUMNS`, else unlimited (a pipe or file). */
export function terminalWidth(env: NodeJS.ProcessEnv = process.env, stdout: { columns?: number } = process.stdout): number {
  const fromEnv = Number(env.COLUMNS);
  return stdout.columns || (Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Infinity);
}

/** The tone of a workflow phase, audit status, sync or health status; `undefined` for one that has none. */
export function toneOf(state: string | undefined): Tone | undefined {
  switch (state) {
    case 'succeeded':
    case 'approved':
    case 'Healthy':
    case 'Synced':
      return 'green';
    case 'running':
    case 'submitted':
    case 'pending':
    case 'awaiting-approval':
    case 'Progressing':
    case 'OutOfSync':
    case 'Suspended':
      return 'yellow';
    case 'failed':
    case 'rejected':
    case 'expired':
    case 'Degraded':
    case 'Missing':
      return 'red';
    default:
      return undefined;
  }
}

/** A state as a coloured cell (see {@link toneOf}). */
export function state(text: string | undefined): Cell {
  return { text: text ?? '', tone: toneOf(text) };
}

/**
 * A time relative to `now`, as people read it in a list: `just now`, `42s ago`, `3m ago`, `5h ago` (hours up to two days), `2d ago`, and for
 * a time ahead `in 3h`. Anything that is not an ISO 8601 time is returned as it is.
 * @example ago('2026-01-01T10:00:00Z', Date.parse('2026-01-01T10:03:10Z')) // '3m ago'
 */
export function ago(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const seconds = Math.round((now - at) / 1000);
  const span = Math.abs(seconds);
  if (span < 5) return 'just now';
  const text =
    span < 60 ? `${span}s` : span < 3600 ? `${Math.floor(span / 60)}m` : span < 172_800 ? `${Math.floor(span / 3600)}h` : `${Math.floor(span / 86_400)}d`;
  return seconds >= 0 ? `${text} ago` : `in ${text}`;
}

/** Characters of `text` as a terminal counts them (code points; pds's tables hold names, tags, hosts and messages). */
const widthOf = (text: string) => [...text].length;

/** `text` cut to `width` characters, ending in `…` when cut. */
export function truncate(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : chars.slice(0, Math.max(0, width - 1)).join('') + '…';
}

/**
 * The column widths that fit `total`: the widest column gives up a character at a time, never below its floor.
 * @returns `natural` unchanged when it fits already (or cannot be made to).
 */
function fit(natural: number[], floors: number[], total: number): number[] {
  const widths = [...natural];
  const used = () => widths.reduce((a, b) => a + b, 0) + GAP.length * (widths.length - 1);
  while (used() > total) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) if (widths[i]! > floors[i]! && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    if (widest < 0) break;
    widths[widest]!--;
  }
  return widths;
}

/**
 * Render a borderless table, one line per row, each line ending in a newline.
 * @param head column titles (printed in upper case).
 * @param options.width the terminal width to fit (default {@link terminalWidth}); `Infinity` with `wide`.
 * @param options.colour colour the cells that have a tone (default {@link stdoutColour}).
 */
export function renderTable(head: string[], rows: Cell[][], options: { width?: number; wide?: boolean; colour?: boolean } = {}): string {
  const width = options.wide ? Infinity : (options.width ?? terminalWidth());
  const colour = options.colour ?? stdoutColour();
  const cells = rows.map((row) =>
    head.map((_, i) => {
      const cell = row[i];
      if (cell !== null && typeof cell === 'object') return { text: oneLine(cell.text), tone: cell.tone };
      return { text: cell === undefined ? '' : oneLine(String(cell)), tone: undefined };
    }),
  );
  const titles = head.map((h) => h.toUpperCase());
  const natural = titles.map((t, i) => Math.max(widthOf(t), ...cells.map((row) => widthOf(row[i]!.text))));
  const floors = natural.map((n, i) => Math.min(n, Math.max(MIN_COLUMN, widthOf(titles[i]!))));
  const widths = fit(natural, floors, width);
  const line = (row: { text: string; tone?: Tone }[]) =>
    row
      .map(({ text, tone }, i) => {
        const shown = truncate(text, widths[i]!);
        // The last column is not padded, so no line ends in spaces.
        const padded = i === row.length - 1 ? shown : shown + ' '.repeat(widths[i]! - widthOf(shown));
        return colour && tone ? padded.replace(shown, styleText(tone, shown)) : padded;
      })
      .join(GAP)
      .trimEnd();
  return [line(titles.map((text) => ({ text }))), ...cells.map(line)].map((l) => l + '\n').join('');
}

/** Line breaks and tabs inside a cell would break the columns: shown as spaces. */
const oneLine = (text: string) => text.replace(/[\r\n\t]+/g, ' ');
