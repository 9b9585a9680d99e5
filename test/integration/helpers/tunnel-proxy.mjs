// ProxyCommand helper for tests: `node tunnel-proxy.mjs <node url> <lease hash> <x-signature>`.
// Sends the tunnel request and, without waiting for the answer, starts piping stdin behind it (the
// node must forward bytes sent right after the request head); strips the `200` head from the answer.
import { connect } from 'node:net';

const [nodeUrl, leaseHash, signature] = process.argv.slice(2);
const url = new URL(nodeUrl);
const socket = connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true });
socket.write(`POST /tunnel/${leaseHash}/tcp HTTP/1.1\r\nHost: ${url.host}\r\nX-Signature: ${signature}\r\n\r\n`);
process.stdin.pipe(socket);

let head = Buffer.alloc(0);
const onData = (chunk) => {
  head = Buffer.concat([head, chunk]);
  const end = head.indexOf('\r\n\r\n');
  if (end < 0) return;
  socket.off('data', onData);
  const statusLine = head.subarray(0, head.indexOf('\r\n')).toString();
  if (!statusLine.startsWith('HTTP/1.1 200 ')) {
    process.stderr.write(`tunnel refused: ${head.toString()}\n`);
    process.exit(1);
  }
  process.stdout.write(head.subarray(end + 4));
  socket.pipe(process.stdout);
};
socket.on('data', onData);
socket.on('error', (err) => {
  process.stderr.write(`tunnel: ${err.message}\n`);
  process.exit(1);
});
