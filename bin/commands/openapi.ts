/** `pds openapi`: print the OpenAPI 3.0 document (the same one served at /openapi.yaml). */
import { loadConfig } from '../../config.js';
import { openApiYaml } from '../../rest/openapi.js';
import { checkedTools } from '../../tools/registry.js';

export const summary = 'print the OpenAPI 3.0 document (YAML)';

/** Write the document to stdout; returns 0. */
export async function run(): Promise<number> {
  const config = loadConfig();
  process.stdout.write(openApiYaml(checkedTools(), config.baseUrl));
  return 0;
}
