/**
 * The do-it-yourself relay a bot developer would write instead of Botrelay, run by the relay suite as a
 * process of its own: one grammY `Bot` per token with `bot.start()` (long polling), each update POSTed as
 * JSON to the bot's backend with `node:http` over a keep-alive Agent, in order per bot (grammY's polling
 * handles one update at a time), up to 5 tries with a short backoff, then dropped. Nothing is stored.
 *
 * Env: RELAY_API_ROOT (the Bot API root, FakeTelegram's in the bench), RELAY_BOTS (JSON
 * `[{ "token": "...", "backend": "http://..." }]`).
 */
import { Agent, request } from "node:http"
import { Bot } from "grammy"
import type { Update } from "grammy/types"

interface Target {
  readonly token: string
  readonly backend: string
}

const apiRoot = process.env["RELAY_API_ROOT"]
const targets = JSON.parse(process.env["RELAY_BOTS"] ?? "[]") as ReadonlyArray<Target>

const agent = new Agent({ keepAlive: true })
const tries = 5

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms))

/** One POST; resolves on a 2xx answer, rejects on anything else. */
const post = (url: URL, body: string) =>
  new Promise<void>((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) }
    }, (res) => {
      res.resume()
      res.on("end", () => {
        const status = res.statusCode ?? 0
        if (status >= 200 && status < 300) resolve()
        else reject(new Error(`backend answered ${status}`))
      })
    })
    req.on("error", reject)
    req.setTimeout(10_000, () => req.destroy(new Error("backend timed out")))
    req.end(body)
  })

/** POSTs the update, up to 5 tries 100, 200, 400, 800 ms apart; then drops it. */
const forward = async (url: URL, update: Update) => {
  const body = JSON.stringify(update)
  for (let attempt = 1; ; attempt++) {
    try {
      await post(url, body)
      return
    } catch (e) {
      if (attempt === tries) {
        console.error(`dropped update ${update.update_id}: ${e instanceof Error ? e.message : String(e)}`)
        return
      }
      await sleep(100 * 2 ** (attempt - 1))
    }
  }
}

const bots = targets.map(({ backend, token }) => {
  const bot = new Bot(token, apiRoot === undefined ? {} : { client: { apiRoot } })
  const url = new URL(backend)
  bot.use((ctx) => forward(url, ctx.update))
  bot.catch((err) => console.error(`bot error: ${err.message}`))
  void bot.start().catch((e: unknown) => console.error(`polling stopped: ${e instanceof Error ? e.message : String(e)}`))
  return bot
})

const shutdown = () => {
  setTimeout(() => process.exit(0), 3_000).unref()
  void Promise.all(bots.map((bot) => bot.stop())).finally(() => process.exit(0))
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
