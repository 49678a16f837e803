/**
 * How results are printed: `-o table` (the default on a terminal: borderless columns fitted to its width,
 * `bin/client/table.ts`), `-o wide` (the same table, no cell cut), `-o json` (the default when piped, so scripts get the
 * API's own bodies), `-o yaml` (the `yaml` package).
 */
import { stringify } from 'yaml';
import { usageError } from './errors.js';
import { renderTable, type Cell } from './table.js';

export const FORMATS = ['table', 'wide', 'json', 'yaml'] as const;
export type Format = (typeof FORMATS)[number];

/** `-o` as given, or the default for where stdout goes. @throws CliError (usage) for another value. */
export function outputFormat(flag: string | undefined, stdout: { isTTY?: boolean } = process.stdout): Format {
  if (flag === undefined) return stdout.isTTY ? 'table' : 'json';
  if ((FORMATS as readonly string[]).includes(flag)) return flag as Format;
  throw usageError(`-o must be one of ${FORMATS.join(', ')} (got "${flag}")`);
}

/** Whether `format` is for people (a table, cut to the terminal or wide) rather than for scripts. */
export const forPeople = (format: Format) => format === 'table' || format === 'wide';

/** A table view of a result: column titles, one row per item, and what to say instead of an empty table. */
export interface TableView {
  head: string[];
  rows: Cell[][];
  /** Printed (on stderr) when `rows` is empty: what there is to do next, naming the `pds` command. */
  empty?: string;
}

/** Print `data` in `format` to `out` (stdout); `table` and `wide` show `view(data)`. */
export function print(format: Format, data: unknown, view: (data: any) => TableView, out: NodeJS.WritableStream = process.stdout): void {
  if (format === 'json') out.write(JSON.stringify(data, null, 2) + '\n');
  else if (format === 'yaml') out.write(stringify(data));
  else {
    const { head, rows, empty } = view(data);
    if (rows.length === 0 && empty) process.stderr.write(`${empty}\n`);
    else out.write(renderTable(head, rows, { wide: format === 'wide' }));
  }
}
