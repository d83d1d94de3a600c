import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, eventually, startServer, type TestServer } from "./Harness.js"

// GET /api/events against the real server: what a client reads off the wire.

/** One server-sent event as read: its fields, or a comment. */
interface Frame {
  readonly id?: string
  readonly event?: string
  readonly data?: string
  readonly comment?: string
}

/** A connection to the event stream, read as it arrives. */
interface Sse {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly frames: Array<Frame>
  /** The answer's text, for non-200 answers. */
  readonly body: () => string
  readonly ended: () => boolean
  /** Whether the answer ended as HTTP ends a complete one (not cut off). */
  readonly complete: () => boolean
  /** The events (not comments) read so far, `data` parsed. */
  readonly events: () => Array<{ readonly id: number; readonly event: string; readonly data: any }>
  /** Resolves with the first event from index `from` that `pick` accepts. */
  readonly next: (pick: (event: { readonly id: number; readonly event: string; readonly data: any }) => boolean, from?: number) => Promise<
    { readonly id: number; readonly event: string; readonly data: any }
  >
  /** Stops reading: what the server writes piles up in the socket buffers. */
  readonly pause: () => void
  readonly resume: () => void
  readonly close: () => void
}

const parse = (block: string): Frame => {
  const frame: Record<string, string> = {}
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) frame.comment = line.slice(1).trim()
    else {
      const colon = line.indexOf(":")
      const field = line.slice(0, colon)
      frame[field] = line.slice(colon + 1).replace(/^ /, "")
    }
  }
  return frame
}

const connect = (
  server: TestServer,
  path: string,
  options: { readonly key?: string; readonly headers?: Record<string, string>; readonly paused?: boolean } = {}
): Promise<Sse> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(`${server.baseUrl}${path}`, {
      agent: false,
      headers: { authorization: `Bearer ${options.key ?? server.adminKey}`, ...options.headers }
    }, (res) => {
      const frames: Array<Frame> = []
      let text = ""
      let buffer = ""
      let ended = false
      let complete = false
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        text += chunk
        if (res.statusCode !== 200) return
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          frames.push(parse(buffer.slice(0, end)))
          buffer = buffer.slice(end + 2)
        }
      })
      res.on("end", () => {
        ended = true
        complete = res.complete
      })
      res.on("error", () => void (ended = true))
      res.on("close", () => void (ended = true))
      if (options.paused === true) res.pause()
      const events = () =>
        frames.filter((f) => f.event !== undefined).map((f) => ({
          id: Number(f.id),
          event: f.event!,
          data: JSON.parse(f.data ?? "null")
        }))
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        frames,
        body: () => text,
        ended: () => ended,
        complete: () => complete,
        events,
        next: (pick, from = 0) => eventually(() => events().slice(from).find(pick)),
        pause: () => void res.pause(),
        resume: () => void res.resume(),
        close: () => void req.destroy()
      })
    })
    req.on("error", reject)
    req.end()
  })

/** The JSON error answer of a refused stream request. */
const refused = async (server: TestServer, path: string, key?: string) => {
  const sse = await connect(server, path, key === undefined ? {} : { key })
  await eventually(() => sse.ended() || undefined)
  return { status: sse.status, json: JSON.parse(sse.body()) }
}

let fake: FakeTelegram.FakeTelegram
let server: TestServer
let tg: FakeTelegram.FakeBot
let botId: number
let otherId: number
let user: ReturnType<FakeTelegram.FakeTelegram["addUser"]>
let operatorKey: string
const open: Array<Sse> = []

const stream = async (path: string, options: Parameters<typeof connect>[2] = {}) => {
  const sse = await connect(server, path, options)
  open.push(sse)
  return sse
}

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
  tg = fake.addBot({ username: "live_bot", first_name: "Live" })
  user = fake.addUser({ first_name: "Ann", username: "ann" })
  botId = (await server.call("/api/bots/add", { body: { token: tg.token, manage_enabled: true } })).json.id
  otherId = (await server.call("/api/bots/add", { body: { token: fake.addBot().token, manage_enabled: true } })).json.id
  const created = await server.call("/api/auth/api-keys", { body: { name: "desk", role: "operator", bot_ids: [botId] } })
  operatorKey = created.json.key
})
afterAll(async () => {
  for (const sse of open) sse.close()
  await server?.close()
  await fake?.close()
})

describe("GET /api/events", () => {
  it("streams text/event-stream: a heartbeat on connect, then an incoming message as `message` and then `chat`", async () => {
    const sse = await stream(`/api/events?bot_id=${botId}`)
    assert.strictEqual(sse.status, 200)
    assert.strictEqual(sse.headers["content-type"], "text/event-stream")
    assert.strictEqual(sse.headers["cache-control"], "no-cache")
    await eventually(() => sse.frames.length > 0 || undefined)
    assert.deepStrictEqual(sse.frames[0], { comment: "heartbeat" })
    const sent = fake.userSends(tg.id, { user: user, text: "hello there" })
    const message = await sse.next((e) => e.event === "message" && e.data.message.text === "hello there")
    assert.deepStrictEqual(message.data, {
      type: "message",
      bot_id: botId,
      chat_id: user.id,
      message: {
        id: sent.message_id,
        chat_id: user.id,
        bot_id: botId,
        user_id: user.id,
        username: "ann",
        first_name: "Ann",
        last_name: "",
        text: "hello there",
        date: sent.date,
        direction: "in",
        edit_date: 0
      }
    })
    const chat = await sse.next((e) => e.event === "chat" && e.id > message.id)
    assert.deepInclude(chat.data, { type: "chat", bot_id: botId, chat_id: user.id })
    assert.deepInclude(chat.data.chat, {
      bot_id: botId,
      chat_id: user.id,
      type: "private",
      first_name: "Ann",
      username: "ann",
      unread_count: 1,
      message_count: 1
    })
    assert.strictEqual(chat.data.chat.last_message.text, "hello there")
    const ids = sse.events().map((e) => e.id)
    assert.deepStrictEqual(ids, [...ids].sort((a, b) => a - b))
    assert.isTrue(ids.every((id) => Number.isSafeInteger(id) && id > 0))
  })

  it("an API send is a `message`; an edit through /tgapi a `message_edited`; a delete a `message_deleted`", async () => {
    const sse = await stream(`/api/events?bot_id=${botId}&chat_id=${user.id}`)
    const sent = await server.call("/api/messages/send", { body: { bot_id: botId, chat_id: user.id, text: "from the desk" } })
    assert.strictEqual(sent.status, 200, sent.text)
    const message = await sse.next((e) => e.event === "message")
    assert.deepStrictEqual(message.data.message, sent.json)
    assert.strictEqual(message.data.message.direction, "out")

    const edit = await fetch(`${server.baseUrl}/tgapi/bot${tg.token}/editMessageText`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ chat_id: user.id, message_id: sent.json.id, text: "from the desk, edited" })
    })
    assert.strictEqual(edit.status, 200)
    const edited = await sse.next((e) => e.event === "message_edited")
    assert.strictEqual(edited.data.message.id, sent.json.id)
    assert.strictEqual(edited.data.message.text, "from the desk, edited")
    assert.isAbove(edited.data.message.edit_date, 0)

    const removed = await fetch(`${server.baseUrl}/tgapi/bot${tg.token}/deleteMessage`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ chat_id: user.id, message_id: sent.json.id })
    })
    assert.strictEqual(removed.status, 200)
    const deleted = await sse.next((e) => e.event === "message_deleted")
    // as stored: with the delivery of the API send (an edit through /tgapi tells Telegram's answer only)
    const { local_id, delivery, delivery_error, delivery_at } = sent.json
    assert.deepStrictEqual(deleted.data.message, {
      ...edited.data.message,
      local_id,
      delivery,
      delivery_error,
      delivery_at,
      deleted: true
    })
    await sse.next((e) => e.event === "chat" && e.id > deleted.id)
    assert.deepStrictEqual(
      sse.events().map((e) => e.event),
      ["message", "chat", "message_edited", "chat", "message_deleted", "chat"],
      "only this chat's events"
    )
  })

  it("an incoming edit is a `message_edited`", async () => {
    const sse = await stream(`/api/events?bot_id=${botId}`)
    const sent = fake.userSends(tg.id, { user: user, text: "typo" })
    await sse.next((e) => e.event === "message" && e.data.message.id === sent.message_id)
    fake.userEdits(tg.id, user.id, sent.message_id, "fixed")
    const edited = await sse.next((e) => e.event === "message_edited")
    assert.strictEqual(edited.data.message.text, "fixed")
    assert.strictEqual(edited.data.message.direction, "in")
  })

  it("a bot's changes are `bot` events with its view, never its token", async () => {
    const sse = await stream(`/api/events?bot_id=${botId}`)
    await server.call("/api/bots/update", { body: { id: botId, description: "now live" } })
    const bot = await sse.next((e) => e.event === "bot" && e.data.bot.description === "now live")
    assert.deepInclude(bot.data, { type: "bot", bot_id: botId, chat_id: 0 })
    assert.strictEqual(bot.data.bot.id, botId)
    assert.notInclude(JSON.stringify(bot.data), tg.token)
  })

  it("operators see their bots' events only; 403 outside their scope, 404 for unknown bots, 400 for bad values", async () => {
    const mine = await stream("/api/events", { key: operatorKey })
    const all = await stream("/api/events")
    fake.userSends(fake.addBot().id, { user: user, text: "nobody's" })
    const otherTg = (await server.call(`/api/bots`)).json.find((b: any) => b.id === otherId)
    assert.isDefined(otherTg)
    await server.call("/api/messages/send", { body: { bot_id: otherId, chat_id: user.id, text: "other bot" } })
    await server.call("/api/messages/send", { body: { bot_id: botId, chat_id: user.id, text: "my bot" } })
    await all.next((e) => e.event === "message" && e.data.message.text === "my bot")
    await mine.next((e) => e.event === "message" && e.data.message.text === "my bot")
    assert.isTrue(all.events().some((e) => e.data.bot_id === otherId))
    assert.isTrue(mine.events().every((e) => e.data.bot_id === botId))

    const outside = await refused(server, `/api/events?bot_id=${otherId}`, operatorKey)
    assertError(outside, 403, "forbidden")
    assertError(await refused(server, "/api/events?bot_id=999999"), 404, "bot_not_found")
    assertError(await refused(server, "/api/events?bot_id=abc"), 400, "invalid_request")
    assertError(await refused(server, "/api/events?last_event_id=-1"), 400, "invalid_request")
    const badHeader = await connect(server, "/api/events", { headers: { "last-event-id": "x" } })
    await eventually(() => badHeader.ended() || undefined)
    assertError({ status: badHeader.status, json: JSON.parse(badHeader.body()) }, 400, "invalid_request")
    const anonymous = await connect(server, "/api/events", { key: "brk_nope" })
    await eventually(() => anonymous.ended() || undefined)
    assert.strictEqual(anonymous.status, 401)
    assert.strictEqual(anonymous.headers["www-authenticate"], "Bearer")
  })

  it("reconnecting with Last-Event-ID replays exactly the missed events, then goes on live", async () => {
    const first = await stream(`/api/events?bot_id=${botId}`)
    await server.call("/api/messages/send", { body: { bot_id: botId, chat_id: user.id, text: "seen 1" } })
    const seen = await first.next((e) => e.event === "chat")
    first.close()
    const all = await stream(`/api/events?bot_id=${botId}&last_event_id=${seen.id}`)
    for (const text of ["missed 1", "missed 2"]) {
      await server.call("/api/messages/send", { body: { bot_id: botId, chat_id: user.id, text } })
    }
    await all.next((e) => e.event === "message" && e.data.message.text === "missed 2")
    await all.next((e) => e.event === "chat" && e.id > all.events().at(-2)!.id)
    const missed = all.events()

    const again = await stream(`/api/events?bot_id=${botId}&last_event_id=1`, { headers: { "last-event-id": String(seen.id) } })
    await again.next((e) => e.id === missed.at(-1)!.id)
    assert.deepStrictEqual(again.events(), missed, "the header wins over the query; the same events, ids and data")
    await server.call("/api/messages/send", { body: { bot_id: botId, chat_id: user.id, text: "live again" } })
    const live = await again.next((e) => e.event === "message" && e.data.message.text === "live again")
    assert.isAbove(live.id, missed.at(-1)!.id)
    const ids = again.events().map((e) => e.id)
    assert.strictEqual(new Set(ids).size, ids.length, "no duplicates")
  })

  it("an id the log does not reach is answered with `event: reset` carrying the newest id, then live events", async () => {
    const sse = await stream(`/api/events?bot_id=${botId}`, { headers: { "last-event-id": "999999999" } })
    const reset = await sse.next((e) => e.event === "reset")
    assert.deepStrictEqual(reset.data, { type: "reset" })
    assert.isAbove(reset.id, 0)
    await server.call("/api/messages/send", { body: { bot_id: botId, chat_id: user.id, text: "after the reset" } })
    const live = await sse.next((e) => e.event === "message")
    assert.isAbove(live.id, reset.id)
  })

  it("is in the OpenAPI document, with the Bearer and session schemes", async () => {
    const spec = (await server.call("/api/openapi.json", { key: null })).json
    const get = spec.paths["/api/events"].get
    assert.isDefined(get.responses["200"].content["text/event-stream"])
    assert.deepStrictEqual(get.security, [{ bearer: [] }, { session: [] }])
    assert.includeMembers(get.parameters.map((p: any) => p.name), ["bot_id", "chat_id", "last_event_id", "last-event-id"])
  })
})

describe("GET /api/events on a server with a 1 s heartbeat and a 200-event limit", () => {
  let small: TestServer
  let smallTg: FakeTelegram.FakeBot
  let smallBot: number

  beforeAll(async () => {
    small = await startServer({
      telegramApi: fake.apiRoot,
      flags: { "events-heartbeat": "1", "events-max-pending": "200" }
    })
    smallTg = fake.addBot()
    smallBot = (await small.call("/api/bots/add", { body: { token: smallTg.token, manage_enabled: true } })).json.id
  })
  afterAll(async () => {
    await small?.close()
  })

  it("sends a heartbeat comment every interval", async () => {
    const sse = await connect(small, `/api/events?bot_id=${smallBot}`)
    open.push(sse)
    await eventually(() => sse.frames.filter((f) => f.comment === "heartbeat").length >= 3 || undefined, 10_000)
    sse.close()
  })

  it("cuts off a client that stopped reading; another goes on receiving everything", async () => {
    const reader = await connect(small, `/api/events?bot_id=${smallBot}`)
    const stuck = await connect(small, `/api/events?bot_id=${smallBot}`, { paused: true })
    open.push(reader, stuck)
    const text = "x".repeat(4000)
    const cutOff = () => small.logs.some((line) => line.includes("an event stream was cut off"))
    // Until the socket buffers under the stuck client are full (a few MB) and 200 more events wait for it.
    let count = 0
    while (!cutOff() && count < 20_000) {
      for (let j = 0; j < 100; j++) fake.userSends(smallTg.id, { user, text: `${count++} ${text}` })
      await eventually(() => reader.events().filter((e) => e.event === "message").length >= count || undefined, 20_000)
    }
    assert.isTrue(cutOff())
    for (let j = 0; j < 100; j++) fake.userSends(smallTg.id, { user, text: `${count++} ${text}` })
    await eventually(() => reader.events().filter((e) => e.event === "message").length >= count || undefined, 20_000)
    stuck.resume()
    await eventually(() => stuck.ended() || undefined)
    const got = stuck.events().filter((e) => e.event === "message").length
    assert.isBelow(got, count, "the stuck client's stream ended early")
    assert.isFalse(stuck.complete(), "its connection was closed under it")
    assert.deepStrictEqual(
      stuck.events().map((e) => e.id),
      reader.events().slice(0, stuck.events().length).map((e) => e.id),
      "what it got, it got in order"
    )
    assert.strictEqual(reader.events().filter((e) => e.event === "message").length, count)
    assert.isFalse(reader.ended())
    reader.close()
  }, 60_000)

  it("stopping the server ends open streams, also those whose clients stopped reading with full buffers", async () => {
    const extra = await startServer({ telegramApi: fake.apiRoot })
    const extraTg = fake.addBot()
    await extra.call("/api/bots/add", { body: { token: extraTg.token, manage_enabled: true } })
    const reading = await connect(extra, "/api/events")
    const paused = await connect(extra, "/api/events", { paused: true })
    const text = "y".repeat(4000)
    let count = 0
    while (count < 1500) {
      for (let j = 0; j < 100; j++) fake.userSends(extraTg.id, { user, text: `${count++} ${text}` })
      await eventually(() => reading.events().filter((e) => e.event === "message").length >= count || undefined, 20_000)
    }
    const started = Date.now()
    await extra.close()
    assert.isBelow(Date.now() - started, 5000)
    await eventually(() => reading.ended() || undefined)
    assert.isTrue(reading.complete(), "the stream of the reading client ended as a whole answer")
    paused.resume()
    await eventually(() => paused.ended() || undefined)
    assert.isBelow(paused.events().length, reading.events().length)
  }, 60_000)
})
