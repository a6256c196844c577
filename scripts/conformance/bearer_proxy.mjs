// A loopback reverse proxy that adds `Authorization: Bearer <token>` to
// every request it forwards, for clients that cannot send one (the MCP
// conformance suite has no option for it). Everything else passes through
// unchanged, Host and Origin included (so the server's DNS-rebinding checks
// still see what the client sent), and bodies stream both ways (SSE).
//
//   node bearer_proxy.mjs LISTEN_PORT UPSTREAM_PORT   (token on stdin)
import http from "node:http";
import { readFileSync } from "node:fs";

const [listenPort, upstreamPort] = process.argv.slice(2).map(Number);
const token = readFileSync(0, "utf8").trim();
if (!listenPort || !upstreamPort || !token) {
  console.error("usage: node bearer_proxy.mjs LISTEN_PORT UPSTREAM_PORT < token");
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = http.request(
    { host: "127.0.0.1", port: upstreamPort, method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", (e) => {
    console.error(`bearer_proxy: ${req.method} ${req.url} upstream error: ${e.code || e.message}`);
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
  res.on("close", () => upstream.destroy());
});
server.listen(listenPort, "127.0.0.1", () => console.log(`proxy on ${listenPort}`));
