import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Adapters, createBotrelay } from "@botrelay/node"
import { eventually, FakeTelegram } from "@botrelay/testing"
import { assert, it } from "vitest"
import { createBot } from "../src/main.js"

it("echoes through Botrelay's long-poll buffer, with no network", async () => {
  const fake = await FakeTelegram.start()
  const botrelay = await createBotrelay({ database: ":memory:", telegramApi: fake.apiRoot, logLevel: "Error" })
  const server = createServer(Adapters.http(botrelay.handler))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const botrelayUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const tg = fake.addBot({ username: "echo_bot" })
  const registered = await botrelay.bots.add({ token: tg.token, long_poll_enabled: true, manage_enabled: true })
  const bot = createBot(tg.token, botrelayUrl)
  try {
    await new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }))
    const user = fake.addUser({ first_name: "Ann" })
    fake.userSends(tg.id, { user, text: "hello" })

    const echo = await fake.waitForSent((sent) => sent.botId === tg.id && sent.message.text === "echo: hello")
    assert.strictEqual(echo.message.chat.id, user.id)
    const history = await eventually(async () => {
      const messages = await botrelay.messages.list({ bot_id: registered.id, chat_id: user.id })
      return messages.length === 2 ? messages : undefined
    })
    assert.sameDeepMembers(history.map((m) => [m.direction, m.text]), [["in", "hello"], ["out", "echo: hello"]])
    assert.isFalse(fake.calls.some((call) => call.botId === tg.id && call.method === "deleteWebhook"))
  } finally {
    await bot.stop()
    await botrelay.close()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await fake.close()
  }
})
