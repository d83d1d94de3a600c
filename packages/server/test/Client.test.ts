import { FetchHttpClient } from "@effect/platform"
import { Bot, Route } from "@botrelay/core"
import { Client } from "@botrelay/http"
import { FakeTelegram } from "@botrelay/testing"
import { Effect, Redacted } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})

const run = <A, E>(
  use: (client: Client.Client) => Effect.Effect<A, E>,
  apiKey: Redacted.Redacted<string> | string = server.adminKey
) =>
  Effect.runPromise(
    Client.make({ baseUrl: `${server.baseUrl}/`, apiKey }).pipe(
      Effect.flatMap(use),
      Effect.provide(FetchHttpClient.layer)
    )
  )

const addBot = (client: Client.Client, tg: FakeTelegram.FakeBot) =>
  client.bots.add({ payload: Bot.NewBot.make({ token: Redacted.make(tg.token), name: tg.username }) })

describe("the typed client", () => {
  it("reads health without needing more than the base URL", async () => {
    const health = await run((client) => client.health.health())
    assert.deepStrictEqual(health, { status: "ok", storage: "ok" })
  })

  it("adds a bot and lists it back with typed fields", async () => {
    const tg = fake.addBot({ username: "client_bot" })
    const { added, bots } = await run((client) =>
      Effect.all({ added: addBot(client, tg), bots: client.bots.list() }, { concurrency: 1 })
    )
    assert.strictEqual(added.name, "client_bot")
    assert.strictEqual(added.token, `${tg.id}:…${tg.token.slice(-4)}`)
    assert.isTrue(added.token_set)
    assert.notInclude(added.token, tg.token.split(":")[1]!)
    assert.isFalse(added.manage_enabled)
    const listed = bots.find((b) => b.id === added.id)
    assert.isDefined(listed)
    assert.strictEqual(listed?.source, added.source)
    assert.strictEqual(listed?.created_at, added.created_at)
    assert.strictEqual(listed.token, added.token)
    assert.strictEqual(listed.secret_token, "")
    assert.isFalse(listed.secret_token_set)
  })

  it("adds routes and lists them by bot", async () => {
    const [a, b] = [fake.addBot(), fake.addBot()]
    const { route, listed } = await run((client) =>
      Effect.gen(function*() {
        const source = yield* addBot(client, a)
        const target = yield* addBot(client, b)
        const route = yield* client.routes.add({
          payload: Route.NewRoute.make({
            source_bot_id: source.id,
            target_bot_id: target.id,
            action: "copy",
            condition_type: "all",
            condition_value: "",
            target_chat_id: 0,
            enabled: true,
            description: "client test"
          })
        })
        const listed = yield* client.routes.list({ urlParams: { bot_id: source.id } })
        return { route, listed }
      })
    )
    assert.strictEqual(route.action, "copy")
    assert.strictEqual(route.description, "client test")
    assert.deepStrictEqual(listed.map((r) => r.id), [route.id])
  })

  it("fails with the contract's typed errors and their codes", async () => {
    const missing = await run((client) => Effect.flip(client.routes.delete({ urlParams: { id: 999_999 } })))
    assert.strictEqual(missing._tag, "NotFound")
    if (missing._tag === "NotFound") {
      assert.strictEqual(missing.code, "route_not_found")
      assert.include(missing.error, "999999")
    }
    const tg = fake.addBot()
    const duplicate = await run((client) => addBot(client, tg).pipe(Effect.zipRight(Effect.flip(addBot(client, tg)))))
    assert.strictEqual(duplicate._tag, "Conflict")
    if (duplicate._tag === "Conflict") assert.strictEqual(duplicate.code, "duplicate_token")
  })

  it("fails with Unauthorized for a wrong key, and never shows the key", async () => {
    const wrong = `brk_${"x".repeat(43)}`
    for (const apiKey of [wrong, Redacted.make(wrong)]) {
      const error = await run((client) => Effect.flip(client.bots.list()), apiKey)
      assert.strictEqual(error._tag, "Unauthorized")
      if (error._tag === "Unauthorized") assert.strictEqual(error.code, "unauthorized")
      for (const shown of [error.message, String(error), JSON.stringify(error)]) {
        assert.notInclude(shown, wrong)
        assert.notInclude(shown, server.adminKey)
      }
    }
  })
})
