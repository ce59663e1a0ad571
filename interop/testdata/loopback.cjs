// Preloaded (node --require) into the npm reference servers that the
// interop tests start over HTTP: their express apps call listen(PORT) with
// no host, which binds every interface. This makes a numeric-port listen
// bind 127.0.0.1 only, so the tests never open a port to the network.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) &&
      (args.length < 2 || typeof args[1] === 'function')) {
    args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
