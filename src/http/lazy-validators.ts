import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifySchemaCompiler } from 'fastify';

type ValidatorBuilder = (externalSchemas: unknown, options: unknown) => FastifySchemaCompiler<unknown>;
type Validate = ((...args: unknown[]) => unknown) & { errors?: unknown };

/**
 * Fastify's own validator builder (Ajv through @fastify/ajv-compiler, with the same options), except that
 * each route's schema is compiled on the route's first request instead of at start. Compiling the
 * schemas of every route was a fifth of the CPU time from start to the first flag answer (issue 19), and
 * most routes are never called in a process's first second. Fastify reads `errors` from the function it
 * was given and passes the parent of the validated value when `schemaEnv` is set (as Ajv's functions
 * have it), so both are forwarded to the compiled function.
 */
export function lazyValidatorBuilder(): AjvCompiler.BuildCompilerFromPool {
  const build = AjvCompiler() as unknown as ValidatorBuilder;
  const lazyBuild: ValidatorBuilder = (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      let validate: Validate | undefined;
      const lazy = (...args: unknown[]) => {
        validate ??= compile(route) as Validate;
        return validate(...args);
      };
      Object.defineProperty(lazy, 'errors', { get: () => validate?.errors });
      Object.defineProperty(lazy, 'schemaEnv', { value: true });
      return lazy as ReturnType<FastifySchemaCompiler<unknown>>;
    };
  };
  return lazyBuild as unknown as AjvCompiler.BuildCompilerFromPool;
}
