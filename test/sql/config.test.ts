import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';

describe('PDS_DATABASE_URL', () => {
  it('selects PostgreSQL with a postgres:// or postgresql:// URL, and SQLite when unset', () => {
    expect(loadConfig({}).databaseUrl).toBeUndefined();
    expect(loadConfig({ PDS_DATABASE_URL: 'postgres://pds:pw@db:5432/pds' }).databaseUrl).toBe('postgres://pds:pw@db:5432/pds');
    expect(loadConfig({ PDS_DATABASE_URL: 'postgresql://db/pds?sslmode=require' }).databaseUrl).toBe('postgresql://db/pds?sslmode=require');
  });

  it.each(['mysql://pds:topsecret@db/pds', 'dbhost:5432', 'postgres://', 'sqlite:///data/pds.db'])(
    'stops start-up on %s, naming the variable and never echoing a password',
    (value) => {
      let message = '';
      try {
        loadConfig({ PDS_DATABASE_URL: value });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^invalid configuration:\n {2}PDS_DATABASE_URL: must be a postgres:\/\//);
      expect(message).not.toContain('topsecret');
    },
  );
});
