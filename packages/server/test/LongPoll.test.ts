import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import * as Config from "../src/Config.js"
import { assertError, eventually, pollWatch, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer
const polls = pollWatch()

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot, extra: polls.layer })
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})

/** A Telegram bot registered with long polling on (unless `fields` say otherwise). */
const longPollBot = async (on: TestServer = server, fields: Record<string, unknown> = {}) => {
  const tg = fake.addBot()
  const reply = await on.call("/api/bots/add", { body: { token: tg.token, long_poll_enabled: true, ...fields } })
  assert.strictEqual(reply.status, 200, reply.text)
  return { tg, id: reply.json.id as number }
}

const poll = (botId: number, query = "", init: { readonly key?: string; readonly on?: TestServer } = {}) =>
  (init.on ?? server).call(
    `/api/updates/poll?bot_id=${botId}${query === "" ? "" : `&${query}`}`,
    init.key === undefined ? {} : { key: init.key }
  )

/** The ids of the updates a poll answered with, asserting a 200. */
const ids = async (reply: Promise<{ status: number; text: string; json: any }>) => {
  const answer = await reply
  assert.strictEqual(answer.status, 200, answer.text)
  return (answer.json as Array<{ update_id: number }>).map((u) => u.update_id)
}

/** Waits until the bot's buffer holds `count` updates (a timeout-0 poll confirms nothing). */
const buffered = (botId: number, count: number, on: TestServer = server) =>
  eventually(async () => {
    const reply = await poll(botId, "", { on })
    return reply.json?.length === count ? reply.json as Array<any> : undefined
  })

describe("GET /api/updates/poll", () => {
  it("serves Telegram objects; offset confirms, 1 confirms nothing, a negative offset keeps the last", async () => {
    const { tg, id } = await longPollBot()
    const user = fake.addUser()
    const texts = ["one", "two", "three", "four"]
    const sent = texts.map((text) => fake.userSends(tg.id, { user, text }))
    const updates = await buffered(id, 4)
    assert.deepStrictEqual(updates.map((u) => u.message.message_id), sent.map((m) => m.message_id))
    assert.deepStrictEqual(updates.map((u) => u.message.text), texts)
    const updateIds = updates.map((u) => u.update_id as number)
    assert.isAbove(updateIds[0]!, 1)
    assert.deepStrictEqual(updateIds, [...updateIds].sort((a, b) => a - b))

    assert.deepStrictEqual(await ids(poll(id, "offset=1")), updateIds)
    assert.deepStrictEqual(await ids(poll(id, "offset=0&limit=2")), updateIds.slice(0, 2))
    assert.deepStrictEqual(await ids(poll(id, `offset=${updateIds[1]}`)), updateIds.slice(1))
    assert.deepStrictEqual(await ids(poll(id)), updateIds.slice(1))
    assert.deepStrictEqual(await ids(poll(id, "offset=-2")), updateIds.slice(2))
    assert.deepStrictEqual(await ids(poll(id)), updateIds.slice(2))
    assert.deepStrictEqual(await ids(poll(id, `offset=${updateIds[3]! + 1}&limit=1`)), [])
    assert.deepStrictEqual(await ids(poll(id)), [])
  })

  it("holds a poll open and answers it as soon as a message arrives", async () => {
    const { tg, id } = await longPollBot()
    assert.deepStrictEqual(await ids(poll(id)), [])
    const started = Date.now()
    const held = poll(id, "timeout=30")
    await polls.untilHeld(id)
    const message = fake.userSends(tg.id, { text: "wake up" })
    const answer = await held
    assert.strictEqual(answer.status, 200, answer.text)
    assert.isBelow(Date.now() - started, 15_000)
    assert.deepStrictEqual(answer.json.map((u: any) => u.message.message_id), [message.message_id])
  })

  it("ends a pending poll with 409 poll_conflict when a newer one comes; the newer one is answered", async () => {
    const { tg, id } = await longPollBot()
    const older = poll(id, "timeout=30")
    await polls.untilHeld(id)
    const started = Date.now()
    assert.deepStrictEqual(await ids(poll(id, "offset=5&limit=1&timeout=0")), [])
    const conflict = await older
    assertError(conflict, 409, "poll_conflict")
    assert.include(conflict.json.error, "terminated by other getUpdates request")
    assert.isBelow(Date.now() - started, 15_000)
    const newer = poll(id, "timeout=30")
    await polls.untilHeld(id)
    fake.userSends(tg.id, { text: "for the newer poll" })
    assert.strictEqual((await ids(newer)).length, 1)
  })

  it("a poll whose client went away does not hold up the next one", async () => {
    const { tg, id } = await longPollBot()
    const aborted = new AbortController()
    const gone = fetch(`${server.baseUrl}/api/updates/poll?bot_id=${id}&timeout=30`, {
      headers: { authorization: `Bearer ${server.adminKey}` },
      signal: aborted.signal
    }).catch((e: unknown) => e)
    await polls.untilHeld(id)
    aborted.abort()
    assert.instanceOf(await gone, Error)
    await polls.untilHeld(id, 0)
    const next = poll(id, "timeout=30")
    await polls.untilHeld(id)
    fake.userSends(tg.id, { text: "after the abort" })
    assert.strictEqual((await ids(next)).length, 1)
  })

  it("remembers allowed_updates per bot; empty means Telegram's default; skipped ones are confirmed too", async () => {
    const { tg, id } = await longPollBot()
    await fake.waitForPoll(tg.id)
    const user = fake.addUser()
    const message = fake.userSends(tg.id, { user, text: "hi" })
    const callback = fake.enqueue(tg.id, {
      callback_query: { id: "42", from: user, chat_instance: "ci", data: "pressed" }
    })!
    const member = fake.enqueue(tg.id, {
      chat_member: {
        chat: { id: user.id, type: "private", first_name: user.first_name },
        from: user,
        date: 1,
        old_chat_member: { status: "left", user },
        new_chat_member: { status: "member", user }
      }
    })!
    const every = await eventually(async () => {
      const reply = await poll(id, "allowed_updates=message,callback_query,chat_member")
      return reply.json?.length === 3 ? reply.json as Array<any> : undefined
    })
    assert.strictEqual(every[0].message.message_id, message.message_id)
    const all = every.map((u) => u.update_id as number)
    assert.deepStrictEqual(all.slice(1), [callback.update_id, member.update_id])

    assert.deepStrictEqual(await ids(poll(id, "allowed_updates=callback_query")), [callback.update_id])
    assert.deepStrictEqual(await ids(poll(id)), [callback.update_id])
    const other = await longPollBot()
    fake.userSends(other.tg.id, { text: "other bot" })
    assert.strictEqual((await buffered(other.id, 1)).length, 1)

    assert.deepStrictEqual(await ids(poll(id, "allowed_updates=")), [all[0], callback.update_id])
    assert.deepStrictEqual(await ids(poll(id)), [all[0], callback.update_id])
    assert.deepStrictEqual(await ids(poll(id, `offset=${callback.update_id + 1}&allowed_updates=chat_member`)), [
      member.update_id
    ])
    assert.deepStrictEqual(await ids(poll(id, `offset=${member.update_id + 1}`)), [])
    assert.deepStrictEqual(await ids(poll(id, "allowed_updates=")), [])

    assertError(await poll(id, "allowed_updates=Message!"), 400, "invalid_request")
  })

  it("refuses bad parameters with 400 and never clamps them", async () => {
    const { id } = await longPollBot()
    for (
      const [query, field] of [
        ["limit=0", "limit"],
        ["limit=101", "limit"],
        ["limit=2.5", "limit"],
        ["timeout=51", "timeout"],
        ["timeout=-1", "timeout"],
        ["offset=abc", "offset"]
      ] as const
    ) {
      const reply = await poll(id, query)
      assertError(reply, 400, "invalid_request")
      assert.isAbove(reply.json.details.length, 0)
      assert.isTrue(reply.json.details.every((d: any) => d.path === field), query)
    }
    assertError(await server.call("/api/updates/poll"), 400, "invalid_request")
    assertError(await server.call("/api/updates/poll?bot_id=0"), 400, "invalid_request")
    assert.deepStrictEqual(await ids(poll(id, "limit=100&timeout=0&offset=-1")), [])
  })

  it("answers 404 for an unknown bot, 409 long_poll_disabled without long polling, 403 out of scope", async () => {
    assertError(await poll(987654), 404, "bot_not_found")
    const off = await longPollBot(server, { long_poll_enabled: false, manage_enabled: true })
    const disabled = await poll(off.id)
    assertError(disabled, 409, "long_poll_disabled")
    assert.include(disabled.json.error, "long_poll_enabled")

    const mine = await longPollBot()
    const created = await server.call("/api/auth/api-keys", {
      body: { name: "poller", role: "operator", bot_ids: [mine.id] }
    })
    assert.strictEqual(created.status, 200, created.text)
    const key = created.json.key as string
    assert.deepStrictEqual(await ids(poll(mine.id, "", { key })), [])
    assertError(await poll(off.id, "", { key }), 403, "forbidden")
    assertError(await poll(987654, "", { key }), 403, "forbidden")
    assertError(await poll(mine.id, "", { key: null as unknown as string }), 401, "unauthorized")
  })

  it("is in the OpenAPI document", async () => {
    const doc = (await server.call("/api/openapi.json", { key: null })).json
    const operation = doc.paths["/api/updates/poll"].get
    assert.deepStrictEqual(
      operation.parameters.map((p: any) => p.name).sort(),
      ["allowed_updates", "bot_id", "limit", "offset", "timeout"]
    )
    assert.isDefined(operation.responses["200"])
  })
})

describe("the long-poll buffer", () => {
  it("survives a restart on the same database file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "botrelay-longpoll-"))
    try {
      const first = await startServer({ telegramApi: fake.apiRoot, dir })
      const { tg, id } = await longPollBot(first)
      fake.userSends(tg.id, { text: "before" })
      fake.userSends(tg.id, { text: "the restart" })
      const before = await buffered(id, 2, first)
      await first.close()

      const second = await startServer({ telegramApi: fake.apiRoot, dir })
      try {
        assert.deepStrictEqual(await buffered(id, 2, second), before)
        fake.userSends(tg.id, { text: "after" })
        const after = await buffered(id, 3, second)
        assert.deepStrictEqual(after.slice(0, 2), before)
        assert.strictEqual(after[2].message.text, "after")
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("answers a held poll when the server stops, so stopping does not wait for it", async () => {
    const watch = pollWatch()
    const stopping = await startServer({ telegramApi: fake.apiRoot, extra: watch.layer })
    const { id } = await longPollBot(stopping)
    const held = poll(id, "timeout=50", { on: stopping })
    await watch.untilHeld(id)
    const started = Date.now()
    await stopping.close()
    assert.deepStrictEqual(await ids(held), [])
    assert.isBelow(Date.now() - started, 10_000)
  })

  it("keeps at most BOTRELAY_BUFFER_MAX_UPDATES, none older than BOTRELAY_BUFFER_MAX_AGE, and logs trims", async () => {
    const bounded = await startServer({ telegramApi: fake.apiRoot, bufferMaxUpdates: 3, bufferMaxAge: "2s" })
    try {
      const { tg, id } = await longPollBot(bounded)
      const sent = ["a", "b", "c", "d", "e"].map((text) => fake.userSends(tg.id, { text }))
      const kept = await eventually(async () => {
        const reply = await poll(id, "", { on: bounded })
        const last = reply.json?.at(-1)?.message?.message_id
        return last === sent[4]!.message_id ? reply.json as Array<any> : undefined
      })
      assert.deepStrictEqual(kept.map((u) => u.message.text), ["c", "d", "e"])
      const warnings = () =>
        bounded.logs.map((line) => JSON.parse(line)).filter((l) =>
          l.logLevel === "WARN" && String(l.message).includes("long-poll buffer")
        )
      const byCount = warnings()
      assert.isAbove(byCount.length, 0)
      assert.strictEqual(byCount.reduce((sum, l) => sum + l.annotations.dropped, 0), 2)
      assert.isTrue(byCount.every((l) => l.annotations.bot_id === id))

      await eventually(async () => (await ids(poll(id, "", { on: bounded }))).length === 0 || undefined, 10_000)
      const total = warnings().reduce((sum, l) => sum + l.annotations.dropped, 0)
      assert.strictEqual(total, 5)
      assert.notInclude(bounded.logs.join("\n"), tg.token)
      assert.notInclude(bounded.logs.join("\n"), tg.token.split(":")[1]!)
    } finally {
      await bounded.close()
    }
  })
})

describe("buffer retention settings", () => {
  it("default to 10,000 updates and 24 hours; flags override the environment; ages take s, m, h or d", () => {
    const defaults = Config.fromValues({}, {})
    assert.deepInclude(defaults, { bufferMaxUpdates: 10_000, bufferMaxAge: 86_400 })
    const env = { BOTRELAY_BUFFER_MAX_UPDATES: "500", BOTRELAY_BUFFER_MAX_AGE: "90m" }
    assert.deepInclude(Config.fromValues({}, env), { bufferMaxUpdates: 500, bufferMaxAge: 5_400 })
    assert.deepInclude(
      Config.fromValues({ "buffer-max-updates": "7", "buffer-max-age": "3600" }, env),
      { bufferMaxUpdates: 7, bufferMaxAge: 3_600 }
    )
    assert.strictEqual(Config.fromValues({ "buffer-max-age": "7d" }, {}).bufferMaxAge, 604_800)
    assert.strictEqual(Config.fromValues({ "buffer-max-age": "45s" }, {}).bufferMaxAge, 45)
    for (const [flag, value] of [
      ["buffer-max-updates", "0"],
      ["buffer-max-updates", "1.5"],
      ["buffer-max-updates", "1000001"],
      ["buffer-max-age", "0"],
      ["buffer-max-age", "-5"],
      ["buffer-max-age", "2w"],
      ["buffer-max-age", "1.5h"]
    ] as const) {
      assert.throws(() => Config.fromValues({ [flag]: value }, {}), Config.ConfigError, `--${flag}`)
    }
  })
})
