import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Adapters, createBotrelay } from "@botrelay/node"
import { eventually, FakeTelegram } from "@botrelay/testing"
import { assert, it } from "vitest"
import { startBackend } from "../src/main.js"

it("answers the updates Botrelay forwards, with no network", async () => {
  const fake = await FakeTelegram.start()
  const botrelay = await createBotrelay({ database: ":memory:", telegramApi: fake.apiRoot, logLevel: "Error" })
  const server = createServer(Adapters.http(botrelay.handler))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const apiRoot = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tgapi`
  const tg = fake.addBot({ username: "webhook_bot" })
  const secretToken = "s3cret-for-the-backend"
  const backend = await startBackend({ token: tg.token, secretToken, port: 0, apiRoot })
  try {
    const registered = await botrelay.bots.add({
      token: tg.token,
      proxy_enabled: true,
      backend_url: backend.url,
      secret_token: secretToken,
      manage_enabled: true
    })
    const user = fake.addUser({ first_name: "Ann" })
    fake.userSends(tg.id, { user, text: "hello" })

    const answer = await fake.waitForSent((sent) => sent.botId === tg.id && sent.message.text === "You said: hello")
    assert.strictEqual(answer.message.chat.id, user.id)
    const history = await eventually(async () => {
      const messages = await botrelay.messages.list({ bot_id: registered.id, chat_id: user.id })
      return messages.length === 2 ? messages : undefined
    })
    assert.sameDeepMembers(history.map((m) => [m.direction, m.text]), [["in", "hello"], ["out", "You said: hello"]])

    const forged = await fetch(backend.url, { method: "POST", body: "{}" })
    assert.strictEqual(forged.status, 401)
  } finally {
    await botrelay.close()
    await backend.close()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await fake.close()
  }
})
