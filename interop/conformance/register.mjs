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

// Evidence that the client under test did something: with
// TAKO_CONFORMANCE_REQUESTS set to a file name, count the HTTP requests the
// scenario's servers (every node:http server in this process: the MCP
// server, the authorization server) receive, and write the count there on
// exit. A scenario whose checks only say what the client must NOT do
// (auth/resource-mismatch: "did not proceed with authorization") passes
// with a client that never starts; run.sh counts it only when the client
// made at least one request.
import http from 'node:http';
import { writeFileSync } from 'node:fs';

const requestsFile = process.env.TAKO_CONFORMANCE_REQUESTS;
if (requestsFile) {
  let requests = 0;
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === 'request') requests++;
    return emit.call(this, event, ...args);
  };
  process.on('exit', () => writeFileSync(requestsFile, `${requests}\n`));
}
