import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { Adapters, createBotrelay, type Instance } from "@botrelay/node"
import express from "express"

/** Where the app listens, and how its Botrelay is set up. */
export interface Options extends Pick<Instance.Options, "database" | "telegramApi" | "adminKey" | "logLevel"> {
  /** 0 picks a free port. */
  readonly port: number
  /** `127.0.0.1` by default. */
  readonly host?: string | undefined
}

/** Starts an express app with its own `GET /`, and Botrelay's API, Bot API proxy and webhooks under `/botrelay`. */
export const start = async ({ port, host = "127.0.0.1", ...options }: Options) => {
  const botrelay = await createBotrelay({ ...options, prefix: "/botrelay" })
  const app = express()
  app.use("/botrelay", Adapters.express(botrelay.handler))
  app.get("/", async (_req, res) => {
    const bots = await botrelay.bots.list()
    res.json({ app: "express", bots: bots.map((bot) => bot.name) })
  })
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(port, host, (error) => error ? reject(error) : resolve(listening))
  }).catch(async (error) => {
    await botrelay.close()
    throw error
  })
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    botrelay,
    /** Closes the server and stops Botrelay, which answers held long polls so their connections can end. */
    close: async () => {
      await Promise.all([new Promise((resolve) => server.close(resolve)), botrelay.close()])
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { env } = process
  const app = await start({
    port: Number(env.PORT || 3000),
    host: env.HOST || undefined,
    database: env.BOTRELAY_DATABASE || "./data/botrelay.db",
    telegramApi: env.BOTRELAY_TELEGRAM_API || undefined,
    adminKey: env.BOTRELAY_ADMIN_KEY || undefined
  })
  console.log(`Listening on ${app.url}; Botrelay's API is at ${app.url}/botrelay/api`)
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void app.close())
}
