import type { FastifyInstance } from 'fastify';

/**
 * The routes of `app` as fastify registers them (HEAD included where GET is), path by path in
 * registration order, for the 404 and 405 answers: a route added anywhere is listed without a
 * second list to keep. Registered before any route, so that it sees them all.
 */
export function routeTable(app: FastifyInstance): ReadonlyMap<string, readonly string[]> {
  const routes = new Map<string, string[]>();
  app.addHook('onRoute', ({ url, method }) => {
    // A wildcard serves the crank page's assets: files the page asks for, not routes to call.
    if (url.includes('*')) return;
    const methods = routes.get(url) ?? [];
    for (const name of [method].flat()) if (!methods.includes(name)) methods.push(name);
    routes.set(url, methods);
  });
  return routes;
}
