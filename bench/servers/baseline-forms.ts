import { randomUUID } from 'node:crypto';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';

// The baseline for JSON form submissions: the least a Fastify + better-sqlite3 server can do to accept a
// submission durably. One row per request, committed before the answer, with Flagpost's pragmas
// (src/db/connect.ts: WAL, synchronous=FULL). No validation, no form lookup, no logging.

const db = new SQLite(path.join(process.argv[2]!, 'baseline.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('create table if not exists submissions (id text primary key, form_key text not null, data text not null, created_at text not null)');
const insert = db.prepare('insert into submissions (id, form_key, data, created_at) values (?, ?, ?, ?)');

const app = Fastify({ logger: false });
app.post<{ Params: { key: string } }>('/v1/s/:key', async (request) => {
  const id = randomUUID();
  insert.run(id, request.params.key, JSON.stringify(request.body), new Date().toISOString());
  return { success: true, code: 200, message: 'Your form has been submitted successfully!', id };
});
app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' }).then(() => process.stdout.write('ready\n'));
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
