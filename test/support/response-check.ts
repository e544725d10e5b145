import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySerializerCompiler } from 'fastify';

const ajv = new Ajv.default({ strict: false, allErrors: true });
addFormats.default(ajv);

/**
 * A serializer compiler for tests: answers stay plain JSON.stringify, as in production, but every
 * JSON answer is first checked against its route's response schema, so that the schemas (and the
 * OpenAPI document made from them) cannot drift from what the server really sends. A mismatch throws,
 * which the app answers as a 500 and the test sees.
 */
export const checkingSerializerCompiler: FastifySerializerCompiler<unknown> = ({ schema, method, url, httpStatus }) => {
  const body = schema as Record<string, unknown>;
  // Non-JSON answers (files, pages, redirects) are described by `content` or carry no schema of their body.
  const validate = body && !('content' in body) && Object.keys(body).some((k) => k !== 'description') ? ajv.compile(body) : undefined;
  return (data) => {
    if (validate && !validate(data)) {
      throw new Error(`${method} ${url} ${httpStatus}: the answer does not match its response schema: ${ajv.errorsText(validate.errors)}`);
    }
    return JSON.stringify(data);
  };
};
