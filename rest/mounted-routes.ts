/**
 * The routes a Koa app answers, read from the routers mounted on it (@koa/router's own layers), so tests and tools
 * can walk every route without keeping a second list that drifts.
 */
import type Koa from 'koa';
import type Router from '@koa/router';

/** One route: its methods (e.g. `['HEAD', 'GET']`) and its path in @koa/router form (`/api/v1/status/:team/:app`). */
export interface RouteEntry {
  methods: string[];
  path: string;
}

/**
 * Every route of every router mounted on `app` with `app.use(router.routes())`, in mounting order. Middleware layers
 * (`router.use(…)`, which have no methods) are not routes and are left out.
 * @example mountedRoutes(app).find((r) => r.path === '/healthz') // { methods: ['HEAD', 'GET'], path: '/healthz' }
 */
export function mountedRoutes(app: Koa): RouteEntry[] {
  const routes: RouteEntry[] = [];
  for (const middleware of app.middleware) {
    const router = (middleware as { router?: Router }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      if (layer.methods.length > 0 && typeof layer.path === 'string') routes.push({ methods: [...layer.methods], path: layer.path });
    }
  }
  return routes;
}
