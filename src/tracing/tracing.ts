import type { FastifyInstance } from 'fastify';

// Traces (issue 23, docs/adr/0036-metrics-and-traces.md): OpenTelemetry with @fastify/otel, exported
// over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Off
// otherwise, and then nothing of OpenTelemetry is loaded: the modules are imported only here, on demand.
// The exporter reads the standard OTEL_* variables itself (headers, timeout, protocol details).

/** The tracing of this process once started: registers the Fastify instrumentation, flushes at shutdown. */
export interface Tracing {
  /** Registers @fastify/otel on the app (before its routes): one server span per request. */
  register(app: FastifyInstance): Promise<void>;
  /** Sends the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/** Starts the OpenTelemetry trace SDK with the OTLP/HTTP exporter and registers it globally. */
export async function startTracing(
  endpoints: { otlpEndpoint: string | undefined; otlpTracesEndpoint: string | undefined },
  serviceVersion: string,
): Promise<Tracing> {
  // The OTLP rule: the traces endpoint is used as given, the general one gets /v1/traces appended.
  const url = endpoints.otlpTracesEndpoint ?? `${endpoints.otlpEndpoint!.replace(/\/+$/, '')}/v1/traces`;
  const [{ trace }, { TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, { FastifyOtelInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@fastify/otel'),
    ]);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || 'flagpost', 'service.version': serviceVersion }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) })],
  });
  trace.setGlobalTracerProvider(provider);
  const instrumentation = new FastifyOtelInstrumentation({ ignorePaths: '/healthz' });
  instrumentation.setTracerProvider(provider);
  return {
    async register(app) {
      await app.register(instrumentation.plugin());
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}
