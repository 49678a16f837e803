/**
 * The one way pds makes a @koa/router: strict (no optional trailing slash) and case-sensitive, so each route has
 * exactly one spelling and the routers and the gates attached to them decide on the same path (issue 7 item 1).
 * `/api/v1/tenants/`, `/API/v1/tenants` or `//api/v1/tenants` match no route and get the JSON 404.
 */
import Router from '@koa/router';

/** A router that matches paths byte for byte (percent-encoded path parameters are still decoded). */
export function createRouter(): Router {
  return new Router({ strict: true, sensitive: true });
}
