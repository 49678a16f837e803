/**
 * Writing generated files into a checkout without leaving it (issue 17 item 5): every component of the path below
 * the checkout is looked at with `lstat`, and a symbolic link anywhere on it (dangling, to a file, to a directory, even
 * one pointing back inside) is refused, as is `..`, `.` or an absolute path. The file itself is opened with
 * `O_NOFOLLOW`, and with `O_EXCL` when it is new, so a link planted between the check and the write fails the open
 * instead of being followed. (Node has no `openat`: a directory swapped for a link between its check and the open
 * of a file below it is the one race left; scaffolding runs on the user's own checkout.)
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, writeSync, type Stats } from 'node:fs';
import path from 'node:path';

/** A path that must not be written; `message` says which component and why. */
export class OutsideWrite extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`refused to write ${file}: ${reason}`);
    this.name = 'OutsideWrite';
  }
}

function lstatOrMissing(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function segmentsOf(file: string): string[] {
  const segments = file.split('/');
  if (path.isAbsolute(file) || segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw new OutsideWrite(file, 'the path must be relative to the repository, without "." or ".." segments');
  }
  return segments;
}

/**
 * Whether `file` can be written inside `root`, without changing anything.
 * @param root the checkout, e.g. `/home/alice/shop` (itself may be reached through a link: it is the user's choice).
 * @param file a repository-relative path, e.g. `.github/workflows/ci.yml`.
 * @returns `exists` when a regular file is there already, `new` when nothing is.
 * @throws OutsideWrite for a symbolic link (or a non-directory) on the way, a symbolic link or non-file at the end, `..`.
 */
export function checkInside(root: string, file: string): 'new' | 'exists' {
  const segments = segmentsOf(file);
  let at = root;
  for (const [i, segment] of segments.entries()) {
    at = path.join(at, segment);
    const shown = segments.slice(0, i + 1).join('/');
    const stats = lstatOrMissing(at);
    if (!stats) return 'new';
    if (stats.isSymbolicLink()) throw new OutsideWrite(file, `${shown} is a symbolic link; scaffolding writes only real files inside the repository`);
    const last = i === segments.length - 1;
    if (!last && !stats.isDirectory()) throw new OutsideWrite(file, `${shown} is not a directory`);
    if (last && !stats.isFile()) throw new OutsideWrite(file, `${shown} is not a regular file`);
  }
  return 'exists';
}

/**
 * Write `content` to `file` inside `root`, creating missing directories one at a time and checking each, the file
 * opened with `O_NOFOLLOW` (and `O_EXCL` when new).
 * @throws OutsideWrite as {@link checkInside}, also for a link that appears while writing.
 */
export function writeInside(root: string, file: string, content: string): void {
  const segments = segmentsOf(file);
  let at = root;
  for (const segment of segments.slice(0, -1)) {
    at = path.join(at, segment);
    try {
      mkdirSync(at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const stats = lstatSync(at);
    if (stats.isSymbolicLink() || !stats.isDirectory()) throw new OutsideWrite(file, `${path.relative(root, at)} is not a real directory`);
  }
  const target = path.join(at, segments.at(-1)!);
  const existing = checkInside(root, file) === 'exists';
  let fd: number;
  try {
    fd = openSync(target, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (existing ? constants.O_TRUNC : constants.O_EXCL), 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EEXIST') throw new OutsideWrite(file, `${file} changed while writing (a symbolic link or a new file appeared)`);
    throw err;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}
