import { PROTOCOL_VERSION_META_KEY as SDK_KEY } from '@modelcontextprotocol/server';
import { expect, it } from 'vitest';
import { RateLimited } from '../../core/errors.js';
import { PROTOCOL_VERSION_META_KEY, refusedToolCall } from '../../tools/mcp-edge.js';

it('names the protocol-version _meta key as the SDK does (tools/mcp-edge.ts writes it out to avoid loading the SDK)', () => {
  expect(PROTOCOL_VERSION_META_KEY).toBe(SDK_KEY);
});

it('answers a refused 2026-07-28 tools/call with resultType, found by that key', () => {
  const refusal = new RateLimited('rate limit exceeded: retry in 20 s', 20);
  const modern = refusedToolCall({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x', _meta: { [SDK_KEY]: '2026-07-28' } } }, refusal);
  expect(modern?.result.resultType).toBe('complete');
  const legacy = refusedToolCall({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'x' } }, refusal);
  expect(legacy?.result).not.toHaveProperty('resultType');
  expect(legacy?.result.isError).toBe(true);
});
