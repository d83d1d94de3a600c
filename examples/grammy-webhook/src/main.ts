import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { Bot, webhookCallback } from "grammy"

/** Where the backend listens and how it reaches the Bot API. */
export interface BackendOptions {
  readonly token: string
  /** Botrelay sends it in `X-Telegram-Bot-Api-Secret-Token`; other requests get 401. */
  readonly secretToken: string
  /** 0 picks a free port. */
  readonly port: number
  /** `http://<botrelay>/tgapi`, so that what the bot sends is captured; Telegram's when omitted. */
  readonly apiRoot?: string
  /** `127.0.0.1` by default. */
  readonly host?: string
}

/** A grammY webhook backend on node:http that answers every text message Botrelay forwards to it. */
export const startBackend = async (options: BackendOptions) => {
  const bot = new Bot(options.token, options.apiRoot === undefined ? {} : { client: { apiRoot: options.apiRoot } })
  bot.on("message:text", (ctx) => ctx.reply(`You said: ${ctx.message.text}`))
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- grammY's node:http adapter, used as grammY documents it
  const server = createServer(webhookCallback(bot, "http", { secretToken: options.secretToken }))
  const host = options.host ?? "127.0.0.1"
  await new Promise<void>((resolve) => server.listen(options.port, host, resolve))
  const { port } = server.address() as AddressInfo
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return { url: `http://${host}:${port}/`, close }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { BOT_TOKEN, SECRET_TOKEN, PORT, BOTRELAY_URL = "http://127.0.0.1:8080" } = process.env
  if (!BOT_TOKEN || !SECRET_TOKEN) throw new Error("set BOT_TOKEN and SECRET_TOKEN as registered in Botrelay")
  const backend = await startBackend({
    token: BOT_TOKEN,
    secretToken: SECRET_TOKEN,
    port: Number(PORT ?? 3000),
    apiRoot: `${BOTRELAY_URL}/tgapi`
  })
  console.log(`backend listening on ${backend.url}`)
}
