/**
 * How results are printed: `-o table` (cli-table3; the default on a terminal), `-o json` (the default when piped, so
 * scripts get the API's own bodies), `-o yaml` (the `yaml` package).
 */
import Table from 'cli-table3';
import { stringify } from 'yaml';
import { usageError } from './errors.js';

export const FORMATS = ['table', 'json', 'yaml'] as const;
export type Format = (typeof FORMATS)[number];

/** `-o` as given, or the default for where stdout goes. @throws CliError (usage) for another value. */
export function outputFormat(flag: string | undefined, stdout: { isTTY?: boolean } = process.stdout): Format {
  if (flag === undefined) return stdout.isTTY ? 'table' : 'json';
  if ((FORMATS as readonly string[]).includes(flag)) return flag as Format;
  throw usageError(`-o must be one of ${FORMATS.join(', ')} (got "${flag}")`);
}

/** A table view of a result: column titles and one row per item. */
export interface TableView {
  head: string[];
  rows: (string | number | boolean | undefined)[][];
}

/** Print `data` in `format` to `out` (stdout); `table` shows `view(data)`. */
export function print(format: Format, data: unknown, view: (data: any) => TableView, out: NodeJS.WritableStream = process.stdout): void {
  if (format === 'json') out.write(JSON.stringify(data, null, 2) + '\n');
  else if (format === 'yaml') out.write(stringify(data));
  else {
    const { head, rows } = view(data);
    const table = new Table({ head, style: { head: [], border: [] } });
    for (const row of rows) table.push(row.map((cell) => (cell === undefined ? '' : String(cell))));
    out.write(table.toString() + '\n');
  }
}
