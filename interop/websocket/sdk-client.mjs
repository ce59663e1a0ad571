// sdk-client.mjs: the TypeScript SDK 1.x WebSocket client against a tako
// bridge, so that tako's framing is proven to interoperate with another
// implementation (interop/websocket_test.go runs it).
//
// Usage: node --experimental-websocket sdk-client.mjs ws://127.0.0.1:PORT/mcp
//
// The SDK's WebSocketClientTransport uses the global WebSocket, which
// Node 20 exposes only behind --experimental-websocket (Node 22 has it by
// default). The script lists the tools, calls echo, and prints one JSON
// line: {"tools":[names...],"echo":"<text of the result>","protocol":"..."}.
// Any failure prints the error on stderr and exits with status 1.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';

const url = process.argv[2];
if (!url) {
  console.error('usage: sdk-client.mjs URL');
  process.exit(2);
}
if (typeof WebSocket === 'undefined') {
  console.error('no global WebSocket: run node with --experimental-websocket (Node 20) or use Node 22+');
  process.exit(2);
}

const client = new Client({ name: 'tako-interop-ts-sdk', version: '1.0.0' });
const transport = new WebSocketClientTransport(new URL(url));
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const res = await client.callTool({ name: 'echo', arguments: { message: 'hello over websocket' } });
  const text = res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
  console.log(JSON.stringify({
    tools: tools.map((t) => t.name),
    echo: text,
    server: client.getServerVersion()?.name ?? '',
  }));
  await client.close();
  process.exit(0);
} catch (err) {
  console.error(err?.stack ?? String(err));
  process.exit(1);
}
