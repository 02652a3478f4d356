/**
 * Preloaded (`node -r`) into the keyward nodes tests run as processes (keywardProcess.ts): the
 * real Ajv, but a schema compiled by one such process is not compiled again by the next.
 *
 * A node compiles every route's schema as it starts (src/http/rpc.ts, compileRoutes): 0.7 s of
 * CPU on a quiet machine, up to 2.5 s under a whole run's load, and some suites start a node per
 * test (crossSlotWrites.test.ts kills one at each step of a write). Here each compiled
 * validator's source (ajv's own standalone code, the code `compile` generates, as
 * test/support/ajvOnce.ts keeps it for the nodes jest runs in-process) is written to a file
 * named by the hash of ajv's version, the instance's options and the schema; the next process
 * evaluates that source instead of compiling. The name changes with any of the three, so a file
 * is never stale. A schema the standalone code cannot express is compiled as usual every time.
 */
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const process = require('node:process');
const AjvCore = require('ajv/dist/core').default;
const standaloneCode = require('ajv/dist/standalone').default;
const { version } = require('ajv/package.json');

const dir = join(tmpdir(), `keyward-test-ajv-${process.getuid?.() ?? 'user'}`);
mkdirSync(dir, { recursive: true });

/**
 * The instance's options that are plain values (`allErrors`, `strict`, …, and those of `code`) as
 * JSON: what decides the code. Not `defaultMeta`, which the first compilation sets, nor `source`,
 * which only keeps the generated code's text.
 */
const optionsOf = (opts) => {
  const plain = (object, skip = []) =>
    Object.entries(object)
      .filter(
        ([name, value]) => !skip.includes(name) && (value === null || typeof value !== 'object'),
      )
      .filter(([, value]) => typeof value !== 'function')
      .sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([plain(opts, ['defaultMeta']), plain(opts.code ?? {}, ['source'])]);
};

/** What `new Function` makes of a standalone module's source: its exported validator. */
function evaluate(source) {
  const module = { exports: {} };
  // The standalone code requires ajv's runtime helpers by path (ajv/dist/runtime/…).
  new Function('module', 'exports', 'require', source)(module, module.exports, require);
  return module.exports;
}

const compile = AjvCore.prototype.compile;
AjvCore.prototype.compile = function (schema, meta) {
  if (meta || typeof schema !== 'object' || schema === null || '$async' in schema) {
    return compile.call(this, schema, meta);
  }
  const hash = createHash('sha256')
    .update(`${version}\n${optionsOf(this.opts)}\n${JSON.stringify(schema)}`)
    .digest('hex');
  const file = join(dir, `${hash}.js`);
  try {
    return evaluate(readFileSync(file, 'utf8'));
  } catch {
    // Not compiled yet (or not expressible: compiled again below).
  }
  // `source: true` only keeps the generated code next to the validator, for standaloneCode.
  this.opts.code.source = true;
  const validate = compile.call(this, schema);
  try {
    const source = standaloneCode(this, validate);
    // Written whole, then renamed: a process starting meanwhile reads all of it or nothing.
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, source);
    renameSync(partial, file);
  } catch {
    // Not expressible as standalone code: compiled as usual by the next process too.
  }
  return validate;
};
