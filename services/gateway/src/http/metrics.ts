/**
 * The HTTP server's metric (the semantic conventions' http.server.request.duration): each
 * request's duration by method, route template (the route table's path, never the request's:
 * no ids) and status. Measured from the gateway's first middleware to the end of the response.
 * Per request it costs a start time on the response and one attributes object: the listener
 * is one function for all responses.
 */
import type { Response } from 'express';
import { DURATION_BUCKETS_S, SERVICE_ATTRIBUTE, meterOf, metricsOn } from '@mailroom/platform';

const STARTED = Symbol('mailroom.http.started');

type Measured = Response & { [STARTED]?: number };

export interface HttpServerMetrics {
  /** Measures `res` from now to its end. */
  started(res: Response): void;
}

/** The route of a request, as a template: express's matched route path, or none (no route matched: 404, 405). */
export function routeOf(res: Response): string | undefined {
  const path = (res.req as { route?: { path?: unknown } }).route?.path;
  return typeof path === 'string' ? path : undefined;
}

/** The gateway's measurements, or none when the process records no metrics. */
export function httpServerMetrics(): HttpServerMetrics | undefined {
  if (!metricsOn()) return undefined;
  const duration = meterOf().createHistogram('http.server.request.duration', {
    description: 'Duration of HTTP requests the gateway answered, by method, route template and status',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
  });
  function finished(this: Measured): void {
    const at = this[STARTED];
    if (at === undefined) return;
    // The method is one Node's parser knows (it refuses others), the route one of the table's: both bounded.
    const attributes: Record<string, string | number> = { 'http.request.method': this.req.method, 'http.response.status_code': this.statusCode, [SERVICE_ATTRIBUTE]: 'gateway' };
    const route = routeOf(this);
    if (route !== undefined) attributes['http.route'] = route;
    duration.record((performance.now() - at) / 1000, attributes);
  }
  return {
    started(res) {
      (res as Measured)[STARTED] = performance.now();
      res.once('finish', finished);
    },
  };
}
