// An MCP endpoint behind the TypeScript SDK's own DNS-rebinding protection
// (hostHeaderValidation), which allows one host name, mcp.example: a client
// that reaches it as 127.0.0.1 gets the SDK's 403, as a person who copies
// the wrong URL does. Used by cli_test.go (TestCLIHostCheck403).
'use strict';
const express = require('express');
const { hostHeaderValidation } = require('@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js');

const app = express();
app.use(hostHeaderValidation(['mcp.example']));
app.all('/mcp', (req, res) => res.status(500).json({ error: 'not reached in this test' }));
const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening on port ${server.address().port}`);
});
