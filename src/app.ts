/**
 * Builds the HTTP app from its dependencies. No I/O at import time: main.ts (and the tests) open
 * storage and vendors and pass them in.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Authenticator } from './auth/authenticate.js';
import type { Config } from './config/config.js';
import { CompletionPipeline } from './completions/completion-pipeline.js';
import { chatCompletionsApi, completionsApi } from './completions/inference-apis.js';
import { malformedUrl, serviceUnavailable } from './errors/gateway-error.js';
import { requireApiKey } from './http/api-key-auth.js';
import { registerCompletionsRoute } from './http/completions-route.js';
import { IdempotentReplies } from './http/idempotent-replies.js';
import { InFlightCompletions } from './http/in-flight-completions.js';
import { decodeContentEncoding } from './http/content-encoding.js';
import { cors } from './http/cors.js';
import { answerClientError, sendError } from './http/error-reply.js';
import { registerModelsRoute } from './http/models-route.js';
import { registerOpenApiRoute } from './http/openapi-route.js';
import { UnknownRoutes } from './http/unknown-route.js';
import { registerUsageRoute } from './http/usage-route.js';
import { registerAdminRoutes } from './http/admin-routes.js';
import { registerDashboardApi, registerDashboardRoutes } from './http/dashboard-routes.js';
import type { Logger } from './observability/logger.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { RunRecorder } from './completions/run-recorder.js';
import type { Storage } from './storage/types.js';
import type { Admission } from './usage/admission.js';
import { IdempotencyKeys } from './usage/idempotency-keys.js';
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
  /** For shutdown past its grace period: ends every completion still running with a 503 or an error event. */
  inFlight: InFlightCompletions;
}

export function buildApp(dependencies: AppDependencies): App {
  const { config, storage, registry, admission, logger } = dependencies;
  const metrics = dependencies.metrics ?? createMetrics();
  const ledger = new Ledger(storage, logger, { onWrite: (seconds) => metrics.ledgerWrite.observe(seconds) });
  const recorder = new RunRecorder(ledger, logger, metrics);
  const pipeline = new CompletionPipeline({ config, registry, admission, recorder });
  const authenticator = new Authenticator(storage, config.keyCacheMs);
  const unknown = new UnknownRoutes();
  const inFlight = new InFlightCompletions();
  const idempotency = new IdempotentReplies(new IdempotencyKeys(storage, logger), logger);

  const server: FastifyInstance = Fastify({
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
    // A bad percent-escape in the path, found by the router before any hook runs.
    frameworkErrors: (error, request, reply) => sendError(error, request, reply.header('x-request-id', request.id)),
    keepAliveTimeout: 65_000,
    // Requests that still arrive while the server drains get our own 503 (the `closing` hook below).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
  });
  // Node closes only the connections idle when closing begins; one whose last response ends during
  // the drain would stay open (holding shutdown to its grace period), so idle ones are closed as they appear.
  let sweep: NodeJS.Timeout | undefined;
  let closing = false;
  server.addHook('preClose', (done) => {
    closing = true;
    sweep = setInterval(() => server.server.closeIdleConnections(), 100).unref();
    done();
  });
  server.addHook('onClose', async () => {
    clearInterval(sweep);
    authenticator.close();
    metrics.close();
  });
  server.decorateRequest('caller', null);
  // JSON is the only body the gateway reads: any other content type gets a 415.
  server.removeAllContentTypeParsers();
  server.addContentTypeParser('application/json', { parseAs: 'string' }, server.getDefaultJsonParser('error', 'error'));

  server.addHook('onRoute', (route) => unknown.remember(route));
  // Every response carries the request's id, errors included.
  server.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  const corsHook = cors(config.corsOrigins);
  if (corsHook) server.addHook('onRequest', corsHook);
  // A request that still arrives while the server drains (pipelined, or on a kept-alive connection)
  // gets a 503; fastify has already marked its connection to close.
  server.addHook('onRequest', (_request, _reply, done) => {
    if (!closing) return done();
    done(serviceUnavailable('The gateway is shutting down; retry on another instance or shortly.', 'shutting_down'));
  });
  // The router refuses a bad percent-escape in the path (FST_ERR_BAD_URL, through `frameworkErrors`),
  // but the query parser is lenient: a query that does not percent-decode is refused here.
  server.addHook('onRequest', (request, _reply, done) => {
    const start = request.url.indexOf('?');
    if (start === -1 || !request.url.includes('%', start)) return done();
    try {
      decodeURIComponent(request.url.slice(start + 1));
    } catch {
      return done(malformedUrl());
    }
    done();
  });
  server.addHook('preParsing', decodeContentEncoding(config.bodyLimitBytes));
  server.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  server.setNotFoundHandler((request, reply) => unknown.answer(request, reply));

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
    v5.addHook('onRequest', requireApiKey(authenticator));
    const routeOptions = { pipeline, keepAliveIntervalMs: config.keepAliveIntervalMs, logger, inFlight, idempotency };
    registerCompletionsRoute(v5, routeOptions, completionsApi);
    registerCompletionsRoute(v5, routeOptions, chatCompletionsApi);
    registerModelsRoute(v5, registry, config.aliases);
    registerUsageRoute(v5, storage);
    registerDashboardApi(v5, storage);
  });

  registerAdminRoutes(server, { config, storage, onPolicyChange: () => admission.invalidatePolicies?.() });
  registerDashboardRoutes(server, { config, storage });

  return { server, metrics, pipeline, inFlight };
}

const saneRequestId = /^[\x21-\x7e]{1,200}$/;

/** The caller's `x-request-id` when it is a sane token, else a new unguessable one. */
function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && saneRequestId.test(incoming)) return incoming;
  return `req_${randomUUID()}`;
}
