/**
 * References resolve (issue 18 item 7): a backticked path in a Markdown file, or in a comment of a `.ts`, `.js`,
 * `.yaml` or `.sh` file, that starts with a top-level folder or a root file of this repository names something that
 * exists, and an anchor into one of our Markdown files names one of its headings. Paths with a placeholder or a glob
 * (`*`, `<`, `{`, `$`, `…`) are skipped; `foo.js` also resolves to its source `foo.ts`; a trailing `:line` is ignored.
 * No comment or Markdown file names a path of the machine it was written on (the work directory), or cites the
 * team's specification document, held outside the repository, instead of `docs/api.md`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((f) => f && !/(^|\/)(node_modules|dist)\//.test(f) && existsSync(path.join(root, f)));
/** Top-level folders and root files, as tracked (build output and dependencies are not the repository's). */
const tops = new Set(files.map((f) => f.split('/')[0]!).filter((t) => t !== 'dist' && t !== 'node_modules'));

/** The comment text of a TypeScript or JavaScript file, every comment once. */
function codeComments(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('x') ? ts.ScriptKind.TSX : undefined);
  const seen = new Set<number>();
  const out: string[] = [];
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      out.push(text.slice(r.pos, r.end));
    }
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(text, node.getEnd()));
    node.forEachChild(visit);
  };
  visit(source);
  collect(ts.getLeadingCommentRanges(text, source.endOfFileToken.getFullStart()));
  return out;
}

/** The comment text of a YAML or shell file: what follows a `#` that starts a line or follows a space. */
function hashComments(text: string): string[] {
  return text.split('\n').flatMap((line) => {
    const m = /(?:^|\s)#(?!!)(.*)$/.exec(line);
    return m ? [m[1]!] : [];
  });
}

/** GitHub's heading anchors of a Markdown file. */
const anchorCache = new Map<string, Set<string>>();
function anchors(file: string): Set<string> {
  let set = anchorCache.get(file);
  if (!set) {
    set = new Set();
    const counts = new Map<string, number>();
    let fenced = false;
    for (const line of readFileSync(path.join(root, file), 'utf8').split('\n')) {
      if (/^\s*```/.test(line)) fenced = !fenced;
      const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (!m) continue;
      const slug = m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-');
      const n = counts.get(slug) ?? 0;
      counts.set(slug, n + 1);
      set.add(n ? `${slug}-${n}` : slug);
    }
    anchorCache.set(file, set);
  }
  return set;
}

/** MCP method names that look like paths under `tools/`. */
const MCP_METHODS = new Set(['tools/list', 'tools/call']);

/** Why `ref` does not resolve, or undefined when it does (or is not a reference to this repository). */
function problem(ref: string): string | undefined {
  if (/[*<{$…\s]|\.\.\./.test(ref) || MCP_METHODS.has(ref)) return undefined;
  const [target, anchor] = ref.replace(/:\d+(-\d+)?$/, '').split('#') as [string, string | undefined];
  const top = target.split('/')[0]!;
  if (!tops.has(top) || (target === top && !ref.includes('/') && !/\./.test(top) && !tops.has(top))) return undefined;
  const candidates = [target, target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx')];
  const found = candidates.find((c) => existsSync(path.join(root, c)));
  if (!found) return 'no such file or folder';
  if (anchor !== undefined && found.endsWith('.md') && !anchors(found).has(anchor)) return `no heading with the anchor #${anchor}`;
  return undefined;
}

describe('references in comments and Markdown', () => {
  it('name files, folders and headings that exist in this repository', () => {
    const broken: string[] = [];
    for (const file of files) {
      const ext = path.extname(file);
      let texts: string[];
      const text = () => readFileSync(path.join(root, file), 'utf8');
      if (ext === '.md') texts = [text()];
      else if (['.ts', '.tsx', '.js', '.mjs', '.cjs'].includes(ext)) texts = codeComments(file, text());
      else if (['.yaml', '.yml', '.sh'].includes(ext) || file === '.ci/run') texts = hashComments(text());
      else continue;
      for (const t of texts) {
        const outside = /(?:^|[\s(`'"])(\/work\/[^\s`'")]*)/.exec(t);
        if (outside) broken.push(`${file}: ${outside[1]}: a path outside the repository`);
        // The specification cited by name (its file, a section of it, "the" spec), not the word as a placeholder.
        if (/\bSPEC(?:\.md\b|'s\b| ?§| ")|\b[Tt]he SPEC\b/.test(t)) broken.push(`${file}: cites the SPEC, which the repository does not hold: cite docs/api.md#<section>`);
        for (const m of t.matchAll(/`([^`\n]+)`/g)) {
          const why = problem(m[1]!);
          if (why) broken.push(`${file}: \`${m[1]}\`: ${why}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
