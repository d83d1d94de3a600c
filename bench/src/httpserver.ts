/**
 * The http suite's server, a process of its own so the client's CPU is measured apart: a plain node:http
 * server on 127.0.0.1 and a free port that reads each request's body and answers
 * `/bot<token>/sendMessage` with a small Telegram-like JSON (~200 bytes) and `/bot<token>/getUpdates`
 * with a 64 KB one. Prints one JSON line `{ port }` and runs until killed.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

const small = Buffer.from(JSON.stringify({
  ok: true,
  result: {
    message_id: 4711,
    from: { id: 123456789, is_bot: true, first_name: "Bench", username: "http_bench_bot" },
    chat: { id: 987654321, first_name: "User", type: "private" },
    date: 1_700_000_000,
    text: "a message of ordinary length"
  }
}))

/** getUpdates answers of about 64 KB: as many messages as fit. */
const big = (() => {
  const result: Array<unknown> = []
  for (let i = 0; JSON.stringify(result).length < 64 * 1024 - 400; i++) {
    result.push({
      update_id: 100_000 + i,
      message: {
        message_id: i,
        from: { id: 987654321, is_bot: false, first_name: "User", language_code: "en" },
        chat: { id: 987654321, first_name: "User", type: "private" },
        date: 1_700_000_000 + i,
        text: `message number ${i} of the getUpdates answer`
      }
    })
  }
  return Buffer.from(JSON.stringify({ ok: true, result }))
})()

const server = Http.createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    const body = req.url?.endsWith("/getUpdates") ? big : small
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
    res.end(body)
  })
})
server.keepAliveTimeout = 60_000
server.headersTimeout = 65_000
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(`${JSON.stringify({ port, small: small.length, big: big.length })}\n`)
})
const close = () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
}
process.once("SIGTERM", close)
process.once("SIGINT", close)
