/**
 * Builds the HTTP app from its dependencies. No I/O at import time: main.ts (and the tests) open
 * storage and vendors and pass them in.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Authenticator, type Caller } from './auth/authenticate.js';
import type { Config } from './config/config.js';
import { CompletionPipeline } from './completions/completion-pipeline.js';
import { createCompletionsEdge, edgeServerFactory } from './http/completions-edge.js';
import { CompletionsHandler, headersOf, registerCompletionsRoute } from './http/completions-route.js';
import { answerClientError } from './http/client-error.js';
import { toErrorResponse } from './errors/error-mapper.js';
import { GatewayError } from './errors/gateway-error.js';
import { corsPolicy, registerCors } from './http/cors.js';
import { registerModelsRoute } from './http/models-route.js';
import { registerOpenApiRoute } from './http/openapi-route.js';
import { requestIdFor } from './http/request-id.js';
import { registerUsageRoute } from './http/usage-route.js';
import { registerAdminRoutes } from './http/admin-routes.js';
import { registerDashboardApi, registerDashboardRoutes } from './http/dashboard-routes.js';
import type { Logger } from './observability/logger.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { createRequestObserver } from './completions/request-observer.js';
import type { Storage } from './storage/types.js';
import type { Admission } from './usage/admission.js';
import { Ledger } from './usage/ledger.js';
import type { VendorRegistry } from './vendors/registry.js';
import './http/fastify-types.js';

export interface AppDependencies {
  config: Config;
  storage: Storage;
  registry: VendorRegistry;
  admission: Admission;
  logger: Logger;
  metrics?: Metrics;
}

export interface App {
  server: FastifyInstance;
  metrics: Metrics;
  /** For shutdown: `pipeline.drain()` waits for in-flight ledger records. */
  pipeline: CompletionPipeline;
}

export function buildApp(dependencies: AppDependencies): App {
  const { config, storage, registry, admission, logger } = dependencies;
  const metrics = dependencies.metrics ?? createMetrics();
  const ledger = new Ledger(storage, logger, { onWrite: (seconds) => metrics.ledgerWrite.observe(seconds) });
  const pipeline = new CompletionPipeline({ config, registry, admission, ledger, storage });
  const observer = createRequestObserver(logger, metrics);
  const authenticator = new Authenticator(storage, config.keyCacheMs);
  const completions = new CompletionsHandler({ pipeline, config, observer, logger });
  const edge = createCompletionsEdge({ handler: completions, authenticator, cors: corsPolicy(config.corsOrigins), bodyLimitBytes: config.bodyLimitBytes });

  const server: FastifyInstance = Fastify({
    serverFactory: edgeServerFactory(edge),
    loggerInstance: logger.child({ component: 'http' }, { level: 'warn' }) as FastifyBaseLogger,
    bodyLimit: config.bodyLimitBytes,
    genReqId: requestIdFor,
    requestTimeout: 0,
    // One logger for every request (our lines carry requestId themselves): no pino child per request.
    childLoggerFactory: (logger) => logger,
    logController: new LogController({ disableRequestLogging: true }),
    // Slowloris: a connection that never finishes its headers is dropped (Node checks about every second).
    http: { headersTimeout: config.headersTimeoutMs ?? 20_000, connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs ?? 20_000) },
    clientErrorHandler: answerClientError,
    keepAliveTimeout: 65_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  }) as unknown as FastifyInstance;
  server.addHook('preClose', (done) => {
    edge.close();
    done();
  });
  server.addHook('onClose', async () => {
    authenticator.close();
    metrics.close();
  });
  server.decorateRequest('caller', null);

  server.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  registerCors(server, config.corsOrigins);

  server.setErrorHandler(async (error, request, reply) => {
    // An authenticated completion whose body fastify could not read: the handler records and answers it.
    if (request.caller && request.routeOptions.url === '/v5/completions') {
      reply.hijack();
      return completions.refuse(reply.raw, { requestId: request.id, caller: request.caller, headers: headersOf(reply) }, error);
    }
    const mapped = toErrorResponse(error);
    if (mapped.status >= 500 && !(error instanceof GatewayError)) request.log.error({ err: error, requestId: request.id }, 'unhandled error');
    return reply.status(mapped.status).headers(mapped.headers).send(mapped.body);
  });

  server.setNotFoundHandler(async (request, reply) => {
    const error = new GatewayError(`No route for ${request.method} ${request.url.split('?')[0]}.`, { status: 404, type: 'not_found_error', code: 'route_not_found' });
    const mapped = toErrorResponse(error);
    return reply.status(404).headers(mapped.headers).send(mapped.body);
  });

  server.get('/health', async () => ({ status: 'ok' }));
  server.get('/ready', async (_request, reply) => {
    try {
      await storage.ping();
      return { status: 'ready', storage: storage.kind, vendors: registry.vendorNames() };
    } catch {
      return reply.status(503).send({ status: 'unavailable', storage: 'unreachable', vendors: registry.vendorNames() });
    }
  });
  server.get('/metrics', async (_request, reply) => {
    return reply.type(metrics.contentType).send(await metrics.scrape());
  });

  registerOpenApiRoute(server);

  server.register(async (v5) => {
    // Callback style: a cached key is checked without a promise.
    v5.addHook('onRequest', (request, _reply, done) => {
      let result: Caller | Promise<Caller>;
      try {
        result = authenticator.authenticate(request.headers as Record<string, string | undefined>);
      } catch (error) {
        done(error as Error);
        return;
      }
      if (result instanceof Promise) {
        result.then((caller) => {
          request.caller = caller;
          done();
        }, done);
        return;
      }
      request.caller = result;
      done();
    });
    registerCompletionsRoute(v5, completions);
    registerModelsRoute(v5, registry, config.aliases);
    registerUsageRoute(v5, storage);
    registerDashboardApi(v5, { storage });
  });

  registerAdminRoutes(server, { config, storage, onPolicyChange: () => admission.invalidatePolicies?.() });
  registerDashboardRoutes(server, { config, storage });

  return { server, metrics, pipeline };
}
