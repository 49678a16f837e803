/**
 * What an inspector had to assume. Every inspector (`javascript.ts`, `python.ts`, `go.ts`, `static.ts`) returns its
 * notes with its settings, and each note becomes one checklist item, so nothing assumed is silent.
 */

/**
 * Something assumed that the team should check, e.g.
 * `{ id: 'lockfile', text: 'No package-lock.json: builds use "npm install" …' }`.
 */
export interface Note {
  /** Stable key of the checklist item, e.g. `lockfile`, `python-app`, `go-package`. */
  id: string;
  /** One or two sentences: what was assumed and how to change it. */
  text: string;
}
