/**
 * FakeTelegram as a process of its own, so load against it does not share a thread with the load
 * generator. Prints one JSON line `{ apiRoot, bots: [{ token, chatId }] }` and runs until killed.
 *
 * Env: FAKE_BOTS (default 1).
 */
import { FakeTelegram } from "@botrelay/testing"

const fake = await FakeTelegram.start()
const count = Number(process.env["FAKE_BOTS"] ?? "1")
const bots = Array.from({ length: count }, (_, i) => {
  const bot = fake.addBot({ username: `proxy_bench_${i}_bot` })
  const user = fake.addUser({ first_name: `User ${i}` })
  fake.userSends(bot.id, { user, text: "/start" })
  return { token: bot.token, chatId: user.id }
})
process.stdout.write(`${JSON.stringify({ apiRoot: fake.apiRoot, bots })}\n`)
const close = () => void fake.close().finally(() => process.exit(0))
process.once("SIGTERM", close)
process.once("SIGINT", close)
