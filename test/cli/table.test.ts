/**
 * The CLI's tables and words (issue 19 item 2): borderless columns cut with `…` to a width, never a line ending in
 * spaces, relative times, and the one table that turns the server's REST hints into `pds` commands.
 */
import { describe, expect, it } from 'vitest';
import { ago, renderTable } from '../../bin/client/table.js';
import { cliWords, flagWords } from '../../bin/client/words.js';

describe('renderTable', () => {
  const rows = [['deploy-service-x7k2p', 'submitted', 'x'.repeat(300)]];

  it('fits the width by cutting the widest column, with no borders or trailing spaces', () => {
    const text = renderTable(['workflow', 'status', 'message'], rows, { width: 80, colour: false });
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('WORKFLOW              STATUS     MESSAGE');
    expect(lines[1]!.length).toBe(80);
    expect(lines[1]).toMatch(/^deploy-service-x7k2p  submitted  x+…$/);
    expect(text).not.toMatch(/ \n/);
  });

  it('prints every cell in full when wide, and no colour unless asked', () => {
    expect(renderTable(['message'], rows.map((r) => [r[2]]), { wide: true, colour: false })).toContain('x'.repeat(300));
    // Colour on a terminal is proven on a pseudo-terminal (test/cli/journey.test.ts): Node's styleText checks stdout too.
    expect(renderTable(['phase'], [[{ text: 'failed', tone: 'red' }]], { width: 80, colour: false })).not.toContain('\u001b[');
  });
});

describe('ago', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  it.each([
    ['2026-01-01T11:59:58Z', 'just now'],
    ['2026-01-01T11:57:00Z', '3m ago'],
    ['2026-01-01T07:00:00Z', '5h ago'],
    ['2026-01-03T11:00:00Z', 'in 47h'],
    ['2025-12-25T12:00:00Z', '7d ago'],
  ])('%s is %s', (iso, text) => expect(ago(iso, now)).toBe(text));
});

describe('cliWords', () => {
  it('says the REST requests the server names as pds commands', () => {
    expect(cliWords('Register it: POST /api/v1/repos/grant-access {"team_name":"acme","repo":"acme/web"}, install the app, then POST /api/v1/repos/sync {"team":"acme"}.')).toBe(
      'Register it: pds repos grant acme acme/web, install the app, then pds repos sync acme.',
    );
    expect(cliWords('follow it with GET /api/v1/workflows/deploy-service-x7k2p?wait_seconds=45')).toBe('follow it with pds wait deploy-service-x7k2p');
    expect(cliWords('a platform admin creates it with POST /api/v1/operations/create-tenant/execute {"team_name":"acme"}')).toBe(
      'a platform admin creates it with pds tenants create acme',
    );
    expect(cliWords('nothing to translate')).toBe('nothing to translate');
  });

  it('names flags for parameters', () => {
    expect(flagWords('git_tag: must be SemVer X.Y.Z', { git_tag: '--tag' })).toBe('--tag: must be SemVer X.Y.Z');
  });
});
