import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Duration, Effect, Option, TestClock, TestContext } from "effect"
import { Idempotency, IdempotencyKey, IdempotencyStore } from "@botrelay/core"
import { FakeTelegram, PgCluster } from "@botrelay/testing"
import { assertError, replyOf, startTwoInstances, storages, type TestServer } from "./Harness.js"
import { addBot, chatWhen, type InboxWorld, operatorKey, startWorld } from "./Inbox.js"

const t0 = 1_800_000_000

describe.each(storages)("Idempotency-Key on sends (%s)", (storage) => {
  let world: InboxWorld
  let a: Awaited<ReturnType<typeof addBot>>
  let ann: { id: number }

  beforeAll(async () => {
    world = await startWorld(t0, { storage })
    a = await addBot(world, {}, { username: "alpha_bot" })
    ann = world.fake.addUser({ first_name: "Ann", username: "ann" })
    world.fake.userSends(a.tg.id, { chat: ann.id, text: "hi" })
    await chatWhen(world, a.id, ann.id, (c) => c.message_count === 1)
  })
  afterAll(async () => {
    await world?.close()
  })

  /** A POST with an `Idempotency-Key` (and a key, the admin's by default). */
  const post = async (path: string, body: unknown, idempotencyKey: string | undefined, key = world.server.adminKey) =>
    replyOf(
      await fetch(`${world.server.baseUrl}${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
        },
        body: JSON.stringify(body)
      })
    )
  const sends = (text: string) => world.fake.sent(a.tg.id).filter((s) => s.message.text === text).length

  it("a replay answers the same status and body with Idempotent-Replayed: true and sends nothing", async () => {
    const body = { bot_id: a.id, chat_id: ann.id, text: "once only" }
    const first = await post("/api/messages/send", body, "key-1")
    assert.strictEqual(first.status, 200, first.text)
    assert.isNull(first.headers.get("idempotent-replayed"))
    const again = await post("/api/messages/send", body, "key-1")
    assert.strictEqual(again.status, 200)
    assert.strictEqual(again.text, first.text)
    assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
    assert.strictEqual(sends("once only"), 1)

    const other = await operatorKey(world, [a.id])
    const theirs = await post("/api/messages/send", body, "key-1", other)
    assert.strictEqual(theirs.status, 200, theirs.text)
    assert.isNull(theirs.headers.get("idempotent-replayed"))
    assert.strictEqual(sends("once only"), 2)
  })

  it("a failed send is replayed too: the same 502 and stored message, no second attempt", async () => {
    world.fake.failNext("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" })
    const body = { bot_id: a.id, chat_id: ann.id, text: "refused once" }
    const first = await post("/api/messages/send", body, "key-refused")
    assertError(first, 502, "telegram_error")
    const again = await post("/api/messages/send", body, "key-refused")
    assert.strictEqual(again.status, 502)
    assert.strictEqual(again.text, first.text)
    assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
    assert.strictEqual(world.fake.calls.filter((c) => c.method === "sendMessage" && c.params.text === "refused once").length, 1)
  })

  it("send-media JSON takes a key as well; multipart uploads refuse it", async () => {
    const body = { bot_id: a.id, chat_id: ann.id, type: "photo", url: "https://example.com/cat.jpg", caption: "a cat" }
    const first = await post("/api/messages/send-media", body, "media-1")
    const again = await post("/api/messages/send-media", body, "media-1")
    assert.strictEqual(again.status, first.status)
    assert.strictEqual(again.text, first.text)
    assert.strictEqual(again.headers.get("idempotent-replayed"), "true")
    const form = new FormData()
    form.set("bot_id", String(a.id))
    form.set("chat_id", String(ann.id))
    form.set("type", "document")
    form.set("file", new Blob(["hello"]), "hello.txt")
    const upload = replyOf(
      await fetch(`${world.server.baseUrl}/api/messages/send-media`, {
        method: "POST",
        headers: { authorization: `Bearer ${world.server.adminKey}`, "idempotency-key": "upload-1" },
        body: form
      })
    )
    assertError(await upload, 400, "idempotency_unsupported")
  })

  it("422 idempotency_key_reused for the same key with another body; nothing is sent", async () => {
    assert.strictEqual((await post("/api/messages/send", { bot_id: a.id, chat_id: ann.id, text: "first body" }, "key-2")).status, 200)
    const reused = await post("/api/messages/send", { bot_id: a.id, chat_id: ann.id, text: "second body" }, "key-2")
    assertError(reused, 422, "idempotency_key_reused")
    assert.strictEqual(sends("second body"), 0)
    const onMedia = await post("/api/messages/send-media", { bot_id: a.id, chat_id: ann.id, type: "photo", file_id: "x" }, "key-2")
    assertError(onMedia, 422, "idempotency_key_reused")
  })

  it("409 idempotency_in_progress while the first request runs", async () => {
    world.fake.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 })
    const body = { bot_id: a.id, chat_id: ann.id, text: "slow one" }
    const first = post("/api/messages/send", body, "key-3")
    await world.fake.waitForCall((c) => c.method === "sendMessage" && c.params.text === "slow one")
    const during = await post("/api/messages/send", body, "key-3")
    assertError(during, 409, "idempotency_in_progress")
    assert.strictEqual((await first).status, 200)
    const after = await post("/api/messages/send", body, "key-3")
    assert.strictEqual(after.headers.get("idempotent-replayed"), "true")
    assert.strictEqual(sends("slow one"), 1)
  })

  it("400 invalid_idempotency_key for an empty, too long or non-ASCII key; nothing is sent", async () => {
    const body = { bot_id: a.id, chat_id: ann.id, text: "bad keys" }
    for (const key of ["", "x".repeat(256), "clé"]) {
      const reply = await post("/api/messages/send", body, key).catch(() => undefined)
      if (reply === undefined) continue // fetch itself refuses some header values
      assertError(reply, 400, "invalid_idempotency_key")
    }
    assert.strictEqual((await post("/api/messages/send", body, "x".repeat(255))).status, 200)
    assert.strictEqual(sends("bad keys"), 1)
  })
})

describe.skipIf(!PgCluster.available)("Idempotency-Key across instances sharing PostgreSQL", () => {
  it("the first request's key row is the lock: the other instance answers 409, then replays", async () => {
    const fake = await FakeTelegram.start()
    const instances = await startTwoInstances({ telegramApi: fake.apiRoot })
    const { a, b } = instances
    try {
      const tg = fake.addBot()
      const bot = (await a.call("/api/bots/add", { body: { token: tg.token, manage_enabled: true } })).json
      const user = fake.addUser({ first_name: "Ann" })
      const key = (await a.call("/api/auth/api-keys", { body: { name: "shared", role: "admin" } })).json.key as string
      const post = async (server: TestServer) =>
        replyOf(
          await fetch(`${server.baseUrl}/api/messages/send`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": "shared-1" },
            body: JSON.stringify({ bot_id: bot.id, chat_id: user.id, text: "from one instance" })
          })
        )
      fake.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 })
      const first = post(a)
      await fake.waitForCall((c) => c.method === "sendMessage")
      assertError(await post(b), 409, "idempotency_in_progress")
      assert.strictEqual((await first).status, 200)
      const replay = await post(b)
      assert.strictEqual(replay.status, 200)
      assert.strictEqual(replay.headers.get("idempotent-replayed"), "true")
      assert.strictEqual(fake.sent(tg.id).length, 1)
    } finally {
      await instances.close()
      await fake.close()
    }
  })
})

describe("Idempotency service: keys last 24 hours from the first request (TestClock)", () => {
  it("replays within 24 h, runs again after; sweep deletes expired keys", () =>
    Effect.gen(function*() {
      const rows = new Map<string, { request: string; status: number; body: string; created_at: number }>()
      const store = {
        claim: (caller: string, key: string, request: string, now: number, expiredBefore: number) =>
          Effect.sync(() => {
            const held = rows.get(`${caller}/${key}`)
            if (held === undefined || held.created_at < expiredBefore) {
              rows.set(`${caller}/${key}`, { request, status: 0, body: "", created_at: now })
              return Option.none()
            }
            return Option.some(held)
          }),
        complete: (caller: string, key: string, status: number, body: string) =>
          Effect.sync(() => {
            const held = rows.get(`${caller}/${key}`)!
            rows.set(`${caller}/${key}`, { ...held, status, body })
          }),
        release: (caller: string, key: string) => Effect.sync(() => void rows.delete(`${caller}/${key}`)),
        sweep: (before: number) =>
          Effect.sync(() => {
            let n = 0
            for (const [k, v] of rows) if (v.created_at < before && rows.delete(k)) n++
            return n
          })
      }
      const service = yield* Effect.provideService(Idempotency.make, IdempotencyStore.IdempotencyStore, store)
      let runs = 0
      const answer = Effect.sync(() => ({ status: 200, body: `run ${++runs}` }))
      yield* TestClock.setTime(t0 * 1000)
      assert.deepStrictEqual(yield* service.run("key:1", "k", "req", answer), { answer: { status: 200, body: "run 1" }, replayed: false })
      yield* TestClock.adjust("23 hours")
      assert.deepStrictEqual(yield* service.run("key:1", "k", "req", answer), { answer: { status: 200, body: "run 1" }, replayed: true })
      assert.strictEqual((yield* Effect.flip(service.run("key:1", "k", "other", answer)))._tag, "KeyReused")
      yield* TestClock.adjust("1 hour")
      assert.strictEqual(yield* service.sweep, 0)
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* service.run("key:1", "k", "req", answer), { answer: { status: 200, body: "run 2" }, replayed: false })
      yield* TestClock.adjust("24 hours")
      assert.strictEqual(yield* service.sweep, 0)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* service.sweep, 1)
      const failing = yield* Effect.either(service.run("key:1", "k2", "req", Effect.fail("boom")))
      assert.isTrue(failing._tag === "Left")
      assert.isFalse(rows.has("key:1/k2"))
      assert.strictEqual(Duration.toHours(IdempotencyKey.retention), 24)
    }).pipe(Effect.provide(TestContext.TestContext), Effect.runPromise))
})
