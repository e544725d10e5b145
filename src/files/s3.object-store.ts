import type { S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { loadS3, loadS3Upload } from '../optional-packages.ts';
import { isObjectKey } from './file-storage.ts';
import { type ListedObject, type ObjectStore, ObjectStoreUnavailable } from './object-store.ts';

/** FLAGPOST_S3_*: the bucket and how to reach it; credentials from the standard AWS environment when not given. */
export interface S3Settings {
  bucket: string;
  /** undefined: the standard AWS environment (AWS_REGION, the profile). */
  region: string | undefined;
  /** An S3-compatible store's URL (MinIO, Garage, R2...); undefined: AWS. */
  endpoint: string | undefined;
  /** Bucket in the path (`endpoint/bucket/key`) rather than in the host name; most S3-compatible stores need it. */
  forcePathStyle: boolean;
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
}

/**
 * A part of a multipart upload, the smallest S3 allows. With one part in flight, an upload holds at most
 * two parts in memory; a file smaller than one part (every file at the default 1 MiB limit) goes as one PUT.
 */
const PART_BYTES = 5 * 1024 * 1024;

/**
 * Objects in an S3 bucket (FLAGPOST_FILE_STORAGE=s3), private: no ACL is ever set, and the bytes reach
 * clients only through the admin API. Checksums only where the operation requires them, which
 * S3-compatible stores that do not implement the newer checksum headers accept.
 */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly sdk = loadS3();

  constructor(private readonly settings: S3Settings) {
    this.client = new this.sdk.S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      // A copy: the SDK marks the object it is given, and the configuration is frozen.
      credentials: settings.credentials ? { ...settings.credentials } : undefined,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A store that is down is answered as such at once (503, Retry-After) rather than after long retries.
      maxAttempts: 2,
      requestHandler: { connectionTimeout: 5000, requestTimeout: 30_000 },
    });
  }

  async put(key: string, body: Readable, contentType: string): Promise<void> {
    const upload = new (loadS3Upload().Upload)({
      client: this.client,
      params: { Bucket: this.settings.bucket, Key: this.checked(key), Body: body, ContentType: contentType },
      queueSize: 1,
      partSize: PART_BYTES,
      // A failed multipart upload is aborted, so no part is left behind (and billed) in the bucket.
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      throw new ObjectStoreUnavailable('s3', error);
    }
  }

  async open(key: string): Promise<Readable | undefined> {
    try {
      const answer = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.settings.bucket, Key: this.checked(key) }));
      return answer.Body as Readable;
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw new ObjectStoreUnavailable('s3', error);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.checked(key) }));
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return;
      throw new ObjectStoreUnavailable('s3', error);
    }
  }

  async *list(): AsyncIterable<ListedObject[]> {
    let token: string | undefined;
    do {
      let answer;
      try {
        answer = await this.client.send(new this.sdk.ListObjectsV2Command({ Bucket: this.settings.bucket, Prefix: 'files/', ContinuationToken: token }));
      } catch (error) {
        throw new ObjectStoreUnavailable('s3', error);
      }
      yield (answer.Contents ?? [])
        .filter((o) => o.Key !== undefined && isObjectKey(o.Key))
        .map((o) => ({ key: o.Key!, modifiedAt: o.LastModified ?? new Date(0) }));
      token = answer.IsTruncated ? answer.NextContinuationToken : undefined;
    } while (token);
  }

  close(): void {
    this.client.destroy();
  }

  private checked(key: string): string {
    if (!isObjectKey(key)) throw new Error(`not an object key: ${key}`);
    return key;
  }
}
