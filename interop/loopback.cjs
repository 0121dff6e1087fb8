// Preloaded with `node --require ./loopback.cjs ...`: every TCP listen() in
// the process binds 127.0.0.1, whatever host the program asked for (none,
// which Node takes as all interfaces, or any other). server-everything has no
// host option and listens on all interfaces; the tests stay on loopback.
"use strict";

const net = require("node:net");

const HOST = "127.0.0.1";
const listen = net.Server.prototype.listen;

function isPort(v) {
  return typeof v === "number" || (typeof v === "string" && /^\d+$/.test(v));
}

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === "object") {
    // listen(options[, callback]). A unix socket path or a handle is not TCP.
    const tcp = first.path === undefined && first.handle === undefined && first.fd === undefined &&
      typeof first.listen !== "function" && first._handle === undefined;
    if (tcp) {
      args[0] = { ...first, host: HOST };
    }
  } else if (typeof first === "function" || first === undefined || first === null) {
    // listen([callback]): a random port.
    args = [0, HOST, ...args.slice(typeof first === "function" ? 0 : 1)];
  } else if (isPort(first)) {
    // listen(port[, host][, backlog][, callback])
    let rest = args.slice(1);
    if (typeof rest[0] === "string" || rest[0] === undefined || rest[0] === null) {
      rest = rest.slice(1);
    }
    args = [first, HOST, ...rest];
  }
  // Anything else (a pipe path) is left alone.
  return listen.apply(this, args);
};
