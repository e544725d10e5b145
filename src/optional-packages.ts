import { createRequire } from 'node:module';

// Packages that only some deployments use (PostgreSQL, Redis, SMTP, S3, flagd sync's gRPC, Prometheus
// metrics) are loaded on
// first use instead of at start: on the SQLite default they would add about 0.3 s to start-up, and their
// code and objects memory (gRPC alone about 10 MB of RSS), for nothing. They are CommonJS, so a
// synchronous require keeps their callers synchronous. Types come from `import type`.
const require = createRequire(import.meta.url);

export const loadPg = (): typeof import('pg') => require('pg');
export const loadIoredis = (): typeof import('ioredis') => require('ioredis');
export const loadNodemailer = (): typeof import('nodemailer') => require('nodemailer');
export const loadS3 = (): typeof import('@aws-sdk/client-s3') => require('@aws-sdk/client-s3');
export const loadS3Upload = (): typeof import('@aws-sdk/lib-storage') => require('@aws-sdk/lib-storage');
export const loadGrpc = (): typeof import('@grpc/grpc-js') => require('@grpc/grpc-js');
export const loadProtoLoader = (): typeof import('@grpc/proto-loader') => require('@grpc/proto-loader');
export const loadPromClient = (): typeof import('prom-client') => require('prom-client');
