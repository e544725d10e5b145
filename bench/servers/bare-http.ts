import fs from 'node:fs';
import http from 'node:http';

// The ceiling of this machine for a flag read: node:http answering prepared bytes with the very headers
// Flagpost sends (captured from it by bench/run.ts), with no routing, no lookup and no framework.
// Argument: a JSON file {"<path>": {"status", "headers": [[name, value], ...], "body": "<base64>"}}.

interface Prepared {
  status: number;
  headers: string[];
  body: Buffer;
}

const spec = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as Record<string, { status: number; headers: [string, string][]; body: string }>;
const answers = new Map<string, Prepared>();
for (const [path, answer] of Object.entries(spec)) {
  answers.set(path, { status: answer.status, headers: answer.headers.flat(), body: Buffer.from(answer.body, 'base64') });
}

const server = http.createServer((req, res) => {
  const answer = answers.get(req.url ?? '');
  if (!answer) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
