// ESM loader hook for the conformance suite on Node 20: the suite imports
// globSync from "fs", which Node adds only in 22. This serves "fs" (and
// "node:fs") with a stub globSync added; the client scenarios never call
// it. Use: node --import ./register.mjs <suite>/dist/index.js ...
import { register } from 'node:module';

register('data:text/javascript,' + encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && !context.parentURL?.startsWith('tako-fs:')) {
    return { url: 'tako-fs:fs', shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url === 'tako-fs:fs') {
    const source = "import fs from 'node:fs'; export * from 'node:fs'; export default fs;" +
      "export const globSync = fs.globSync ?? function globSync() { throw new Error('globSync is not available on this Node version'); };";
    return { format: 'module', source, shortCircuit: true };
  }
  return next(url, context);
}
`));
