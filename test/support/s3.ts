import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

/** A real S3-compatible server (s3rver) on loopback, for FLAGPOST_FILE_STORAGE=s3 tests. */
export interface TestS3 {
  bucket: string;
  endpoint: string;
  /** FLAGPOST_S3_* pointing at this server. */
  env: Record<string, string>;
  /** Every key in the bucket. */
  keys(): Promise<string[]>;
  put(key: string, body: Buffer): Promise<void>;
  delete(key: string): Promise<void>;
  /** Stops the server (a store outage); `start` brings it back on the same port with the same objects. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startS3(bucket = 'flagpost-test'): Promise<TestS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-s3-'));
  const create = (port: number) => new S3rver({ address: '127.0.0.1', port, silent: true, directory, configureBuckets: [{ name: bucket }] });
  let server: S3rver | undefined = create(0);
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    bucket,
    endpoint,
    env: {
      FLAGPOST_S3_BUCKET: bucket,
      FLAGPOST_S3_REGION: 'us-east-1',
      FLAGPOST_S3_ENDPOINT: endpoint,
      FLAGPOST_S3_FORCE_PATH_STYLE: 'true',
      FLAGPOST_S3_ACCESS_KEY_ID: 'S3RVER',
      FLAGPOST_S3_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async keys() {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
        keys.push(...(page.Contents ?? []).map((o) => o.Key!));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    async put(key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async stop() {
      await server?.close();
      server = undefined;
    },
    async start() {
      if (server) return;
      server = create(port);
      await server.run();
    },
    async close() {
      client.destroy();
      await server?.close();
      server = undefined;
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
