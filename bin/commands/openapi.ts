/** `pds openapi`: print the OpenAPI 3.0 document (the same one served at /openapi.yaml). */
import { loadConfig } from '../../config.js';
import { openApiYaml } from '../../rest/openapi.js';
import { toolsFor } from '../../tools/registry.js';

export const summary = 'print the OpenAPI 3.0 document as YAML';

export async function run(): Promise<number> {
  const config = loadConfig();
  process.stdout.write(openApiYaml(toolsFor({ readOnly: config.readOnly }), config.baseUrl));
  return 0;
}
