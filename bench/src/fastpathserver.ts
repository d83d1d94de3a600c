/**
 * One Botrelay instance (SQLite file, the services and the runtime of the standalone server) behind
 * two node:http listeners built as the standalone server builds its own: one with the /tgapi fast path
 * (`ProxyFastPath`) in front of the app, one without it, so the proxy suite can load both with the same
 * server, storage and bot. Prints one JSON line `{ on, off }` (their base URLs) once both listen.
 *
 * Env: FP_DATABASE, FP_TELEGRAM_API, FP_ADMIN_KEY, FP_HOST (default 127.0.0.1).
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { Instance, NodeHandler } from "@botrelay/node"
import { Effect, Exit, Scope } from "effect"

const env = (name: string) => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is required`)
  return value
}

const telegramApi = env("FP_TELEGRAM_API")
const host = process.env["FP_HOST"] ?? "127.0.0.1"
const instance = await Instance.create({
  database: env("FP_DATABASE"),
  telegramApi,
  adminKey: env("FP_ADMIN_KEY"),
  logLevel: "Warning"
})
const scope = await instance.runtime.runPromise(Scope.make())
const withoutFastPath = await instance.runtime.runPromise(
  Scope.extend(NodeHandler.make({ fastPath: false }), scope).pipe(Effect.provide(NodeHandler.proxyLayer(telegramApi)))
)

const listen = (handler: NodeHandler.Handler) =>
  new Promise<Http.Server>((resolve) => {
    const server = Http.createServer({ connectionsCheckingInterval: 1000 }, (req, res) => handler(req, res))
    server.listen(0, host, () => resolve(server))
  })

const servers = [await listen(instance.handler), await listen(withoutFastPath)]
const url = (server: Http.Server) => `http://${host}:${(server.address() as AddressInfo).port}`
process.stdout.write(`${JSON.stringify({ on: url(servers[0]!), off: url(servers[1]!) })}\n`)

process.once("SIGTERM", () => {
  for (const server of servers) server.closeAllConnections()
  void Promise.all(servers.map((server) => new Promise((done) => server.close(done))))
    .then(() => instance.runtime.runPromise(Scope.close(scope, Exit.void)))
    .then(instance.dispose)
    .finally(() => process.exit(0))
})
