import { fileURLToPath } from "node:url"
import { Bot } from "grammy"

/**
 * An echo bot whose Bot API root is Botrelay's `/tgapi`: its `getUpdates` is served from Botrelay's
 * long-poll buffer and its replies go through Botrelay to Telegram (and into the history).
 */
export const createBot = (token: string, botrelayUrl: string): Bot => {
  const bot = new Bot(token, { client: { apiRoot: `${botrelayUrl.replace(/\/+$/, "")}/tgapi` } })
  bot.on("message:text", (ctx) => ctx.reply(`echo: ${ctx.message.text}`))
  bot.catch((error) => console.error("update failed:", error.message))
  return bot
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const token = process.env.BOT_TOKEN
  if (!token) throw new Error("set BOT_TOKEN to the token of a bot registered in Botrelay")
  const bot = createBot(token, process.env.BOTRELAY_URL ?? "http://127.0.0.1:8080")
  process.once("SIGINT", () => void bot.stop())
  process.once("SIGTERM", () => void bot.stop())
  await bot.start({ onStart: (me) => console.log(`@${me.username} is polling Botrelay`) })
}
