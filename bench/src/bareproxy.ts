/**
 * The ceiling for the proxy on this machine: a bare node:http server that passes
 * `/tgapi/bot<token>/<method>` on to the upstream Bot API over keep-alive connections and pipes the
 * answer back, with no checks, no storage and no framework.
 *
 * Env: BARE_UPSTREAM (the Bot API root), BARE_PORT, BARE_HOST.
 */
import * as Http from "node:http"

const upstream = new URL(process.env["BARE_UPSTREAM"] ?? "http://127.0.0.1:9")
const agent = new Http.Agent({ keepAlive: true })

const server = Http.createServer((req, res) => {
  if (req.url === "/api/health") return void res.writeHead(200).end("{}")
  const path = (req.url ?? "").replace(/^\/tgapi/, "")
  const headers: Http.OutgoingHttpHeaders = { ...req.headers, host: upstream.host }
  delete headers["connection"]
  const forward = Http.request(
    { host: upstream.hostname, port: upstream.port, path, method: req.method, headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    }
  )
  forward.on("error", () => {
    if (!res.headersSent) res.writeHead(502)
    res.end()
  })
  req.pipe(forward)
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.env["BARE_PORT"] ?? "0"), process.env["BARE_HOST"] ?? "127.0.0.1")
process.once("SIGTERM", () => server.close(() => process.exit(0)))
