/**
 * Pre-routed tool reads and MCP calls (issue 23 item 2): a `GET` to a tool route with a fixed path
 * (`/api/v1/operations`, `/api/v1/tenants`, …), and a `POST /mcp`, is found with one map look-up instead of being
 * offered to every router in turn. Each
 * @koa/router dispatch runs the path against every layer of its router and composes the matched layers anew for each
 * request; a REST read passed a dozen routers, the tool router's own being the longest, before its gates ran.
 *
 * Only the routing is skipped. The route runs exactly what the tool router would run for it, in the same order and
 * with the same context fields set (`ctx.params`, `ctx._matchedRoute`, `ctx.routerPath`, `ctx.matched`): the router's
 * gates (authentication, body, the per-user limit counted in Redis), then the route's handler, which calls `invoke()`
 * (scopes, access). The request log and the metrics sit outside, in the app.
 *
 * A path is pre-routed only when no router mounted before the tool router has a route on it (any method), so the
 * answer is the one the routers would have given; anything else (other methods, paths with parameters, `HEAD`) goes
 * through the routers as before.
 */
import type Router from '@koa/router';
import type { Layer } from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import compose from 'koa-compose';

/** True when some layer of `router` with methods (a route, not `router.use`) matches `path`, for any method. */
function routesPath(router: Router, path: string): boolean {
  return router.match(path, 'GET').path.some((layer) => layer.methods.length > 0);
}

/**
 * Koa middleware answering the fixed-path `method` routes of `target` directly; mount it where `earlier` were mounted
 * before `target`, ahead of them.
 * @param target the tool router (`rest/routes.ts`) or the MCP router (`rest/mcp.ts`), mounted after `earlier`.
 * @param earlier every router mounted before `target`, in order.
 * @param method the method pre-routed: `GET` (tool reads) or `POST` (`/mcp`).
 * @returns the middleware, and the paths it pre-routes (for tests and the start-up log).
 * @example
 * const { middleware } = preRoute(api, [health, console, mcp]);
 * app.use(middleware); for (const r of [health, console, mcp, api]) app.use(r.routes());
 */
export function preRoute(target: Router, earlier: readonly Router[], method: 'GET' | 'POST' = 'GET'): { middleware: Middleware; paths: string[] } {
  const routes = new Map<string, (ctx: Context, next: Next) => Promise<void>>();
  for (const route of target.stack) {
    const path = route.path;
    if (typeof path !== 'string' || route.paramNames.length > 0 || !route.methods.includes(method)) continue;
    if (routes.has(path) || earlier.some((router) => routesPath(router, path))) continue;
    const found = target.match(path, method);
    // A literal path: the route's own pattern matches its text and nothing in it is a pattern character.
    if (!found.route || !route.match(path)) continue;
    routes.set(path, routeOf(target, path, found.path, found.pathAndMethod));
  }
  const middleware: Middleware = (ctx, next) => {
    if (ctx.method !== method) return next();
    const route = routes.get(ctx.path);
    return route ? route(ctx, next) : next();
  };
  return { middleware, paths: [...routes.keys()] };
}

/**
 * The chain @koa/router's dispatch builds for `path` (its `_buildMiddlewareChain`), built once: each matched layer
 * sets the route fields on the context, then runs its middleware.
 */
function routeOf(router: Router, path: string, onPath: Layer[], layers: Layer[]): (ctx: Context, next: Next) => Promise<void> {
  const chain: Middleware[] = [];
  for (const layer of layers) {
    const captures = layer.captures(path);
    chain.push((ctx, next) => {
      const c = ctx as Context & Record<string, unknown>;
      c.captures = [...captures];
      const params = layer.params(path, captures, c.params as Record<string, string> | undefined);
      (c.request as unknown as { params: Record<string, string> }).params = params;
      c.params = params;
      c.routerPath = layer.path;
      c.routerName = layer.name || undefined;
      c._matchedRoute = layer.path;
      if (layer.name) c._matchedRouteName = layer.name;
      return next();
    }, ...(layer.stack as unknown as Middleware[]));
  }
  const run = compose(chain);
  const routeLayer = [...layers].reverse().find((layer) => layer.methods.length > 0)!;
  return (ctx, next) => {
    const c = ctx as Context & Record<string, unknown>;
    // What dispatch records before running the chain (allowedMethods reads `matched`).
    c.matched = [...onPath];
    c.router = router;
    c.routeMatched = true;
    c._matchedRoute = routeLayer.path;
    if (routeLayer.name) c._matchedRouteName = routeLayer.name;
    return run(ctx, next);
  };
}
