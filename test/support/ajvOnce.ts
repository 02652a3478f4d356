import os from 'node:os';
import RealAjv from 'ajv/dist/ajv';
import standaloneCode from 'ajv/dist/standalone';
import type { Options, ValidateFunction } from 'ajv/dist/ajv';

/**
 * `ajv` as the tests load it (jest.config.js maps the package here): the real Ajv, but a schema
 * compiled once in a jest worker is not compiled again by the worker's next test file.
 *
 * jest gives every test file a module registry of its own, so each suite that starts a node in
 * its own process compiled every route's schema again (src/http/rpc.ts, compileRoutes): 0.7 s of
 * CPU per suite on a quiet machine, up to 2.5 s under a whole run's load, 65 suites a run. Here
 * each compiled validator's source (ajv's own standalone code, the code `compile` generates) is
 * kept in a map that lives as long as the worker; another suite with the same options and the
 * same schema evaluates that source in its own context instead of compiling (0.1 s for all of a
 * node's schemas). Only strings cross from one suite to the next: no function, object or realm of
 * another suite. A schema the standalone code cannot express is compiled as usual every time.
 */
export * from 'ajv/dist/ajv';

type Sources = Map<string, string>;

/**
 * The one object a jest worker shares between its test files: a core module (jest hands every
 * test file Node's own `os`). The map hangs on it under a registered symbol.
 */
const SOURCES = Symbol.for('keyward-test:ajv-standalone-sources');
const holder = os as unknown as Record<symbol, Sources | undefined>;
const sources: Sources = (holder[SOURCES] ??= new Map());

/** What `new Function` makes of a standalone module's source: its exported validator. */
function evaluate(source: string): ValidateFunction {
  const module: { exports: unknown } = { exports: {} };
  // The standalone code requires ajv's runtime helpers by path (ajv/dist/runtime/…): this file's
  // own require resolves them, in this suite's registry.
  new Function('module', 'exports', 'require', source)(module, module.exports, require);
  return module.exports as ValidateFunction;
}

export default class Ajv extends RealAjv {
  constructor(options: Options = {}) {
    // `source: true` only keeps the generated code next to each validator, for standaloneCode.
    super({ ...options, code: { ...options.code, source: true } });
    const optionsKey = JSON.stringify(options);
    const compile = this.compile.bind(this);
    this.compile = ((schema: object, meta?: boolean) => {
      if (meta || typeof schema !== 'object' || schema === null || '$async' in schema) {
        return compile(schema, meta);
      }
      const key = `${optionsKey}\n${JSON.stringify(schema)}`;
      const source = sources.get(key);
      if (source !== undefined) return evaluate(source);
      const validate = compile(schema);
      try {
        sources.set(key, standaloneCode(this, validate));
      } catch {
        // Not expressible as standalone code: compiled again by the next suite.
      }
      return validate;
    }) as typeof this.compile;
  }
}
