import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { FlagdProvider } from '@openfeature/flagd-provider';
import { OpenFeature, ProviderEvents } from '@openfeature/server-sdk';

// A child process of bench/flagd-sync.ts: COUNT published flagd providers in in-process mode, each on its
// own OpenFeature domain and its own gRPC connection (a distinct keepalive option keeps grpc-js from sharing
// one subchannel between them, as providers on separate hosts would not). With MODE `grpc`, COUNT bare
// grpc-js SyncFlags streams instead (same .proto, own connections), which only check that the message
// holds the change: the server's delivery without the providers' own work. Talks to the parent over IPC:
//   parent -> child  {expect: n}   the next change sets the rule of flag FLAG to match context {change: n}
//   child -> parent  {ready}       every provider holds the environment's flags
//   child -> parent  {got: [{n, at}]} providers that received change n, `at` in wall-clock ms (Date.now
//                                  scale with sub-ms precision), batched per event-loop turn

const [port, selector, count, offset, flag] = [Number(process.argv[2]), process.argv[3]!, Number(process.argv[4]), Number(process.argv[5]), process.argv[6]!];
const mode = process.argv[7] === 'grpc' ? 'grpc' : 'provider';
const now = () => performance.timeOrigin + performance.now();

let expected = -1;
const seen = new Set<number>(); // providers that got the expected change
let batch: Array<{ n: number; at: number }> = [];

function report(n: number, at: number): void {
  if (batch.length === 0) setImmediate(() => (process.send!({ got: batch }), (batch = [])));
  batch.push({ n, at });
}

process.on('message', (m: { expect?: number; stop?: boolean }) => {
  if (m.expect !== undefined) {
    expected = m.expect;
    seen.clear();
  }
  if (m.stop) {
    for (const client of rawClients) client.close();
    void OpenFeature.close().finally(() => process.exit(0));
  }
});

const rawClients: grpc.Client[] = [];

/** A bare SyncFlags stream; resolves at its first message. */
function rawStream(i: number): Promise<void> {
  const client = new SyncService(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 600_000 + offset + i,
  }) as unknown as grpc.Client & { SyncFlags(req: unknown, md: grpc.Metadata): grpc.ClientReadableStream<{ flagConfiguration: string }> };
  rawClients.push(client);
  const md = new grpc.Metadata();
  md.set('flagd-selector', selector);
  const stream = client.SyncFlags({ selector }, md);
  return new Promise((resolve, reject) => {
    stream.on('data', ({ flagConfiguration }: { flagConfiguration: string }) => {
      const at = now();
      resolve();
      const n = expected;
      if (n < 0 || seen.has(i)) return;
      const targeting = JSON.stringify((JSON.parse(flagConfiguration) as { flags: Record<string, { targeting?: unknown }> }).flags[flag]?.targeting);
      if (targeting?.includes(`"${n}"`)) {
        seen.add(i);
        report(n, at);
      }
    });
    stream.on('error', (error: grpc.ServiceError) => (error.code === grpc.status.CANCELLED ? undefined : reject(error)));
  });
}

const SyncService = (
  grpc.loadPackageDefinition(protoLoader.loadSync(path.join(import.meta.dirname, '../src/flagd-sync/flagd-sync.proto'), { defaults: true })) as unknown as {
    flagd: { sync: { v1: { FlagSyncService: grpc.ServiceClientConstructor } } };
  }
).flagd.sync.v1.FlagSyncService;

const providers: Promise<void>[] = [];
for (let i = 0; i < count; i++) {
  if (mode === 'grpc') {
    providers.push(rawStream(i));
    if (i % 50 === 49) await Promise.all(providers.slice(-50));
    continue;
  }
  const domain = `bench-${offset + i}`;
  const provider = new FlagdProvider({
    resolverType: 'in-process',
    host: '127.0.0.1',
    port,
    selector,
    deadlineMs: 60_000,
    retryBackoffMaxMs: 1000,
    keepAliveTime: 600_000 + offset + i,
  });
  const client = OpenFeature.getClient(domain);
  client.addHandler(ProviderEvents.ConfigurationChanged, (details) => {
    const at = now();
    const n = expected;
    if (n < 0 || seen.has(i) || !details?.flagsChanged?.includes(flag)) return;
    // The change is this one when the rule now matches its number; the receipt time is the event's.
    void client.getBooleanValue(flag, false, { targetingKey: 'bench', change: String(n) }).then((value) => {
      if (value && n === expected && !seen.has(i)) {
        seen.add(i);
        report(n, at);
      }
    });
  });
  providers.push(OpenFeature.setProviderAndWait(domain, provider));
  // Connections a few dozen at a time, so that the listen backlog and the selector checks keep up.
  if (i % 50 === 49) await Promise.all(providers.slice(-50));
}
await Promise.all(providers);
process.send!({ ready: true });
