import { assert, describe, it } from "@effect/vitest"
import { type Delivery, Events, EventLog, EventStore, LiveEvent, type Message, Pipeline, type Stores } from "@botrelay/core"
import { Deferred, Duration, Effect, Exit, Fiber, Logger, Option, Schema, Scope, Stream, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

// The event log on a TestClock: entries from bus events, heartbeats, replay without gaps, resets,
// retention, slow streams cut off, and closing.

const message = (botId: number, chatId: number, id: number, fields: Partial<Message.Message> = {}): Message.Message => ({
  id,
  chat_id: chatId,
  bot_id: botId,
  user_id: 7,
  username: "ann",
  first_name: "Ann",
  last_name: "",
  text: `message ${id}`,
  date: 1_750_000_000 + id,
  direction: "in",
  edit_date: 0,
  ...fields
})

const quiet = Logger.remove(Logger.defaultLogger)

const options: EventLog.Options = { ...EventLog.defaults, closeGrace: Duration.seconds(1) }

/** Frames as short strings: `h` a heartbeat, `r<id>` a reset, `<id>:<name>` an event. */
const show = (frame: EventLog.Frame) =>
  frame._tag === "Heartbeat" ? "h" : frame._tag === "Reset" ? `r${frame.id}` : `${frame.id}:${frame.name}`

/** Runs a stream in the background, keeping what it sends. */
const follow = (stream: Stream.Stream<EventLog.Frame>) =>
  Effect.gen(function*() {
    const frames: Array<EventLog.Frame> = []
    const fiber = yield* Effect.fork(Stream.runForEach(stream, (frame) => Effect.sync(() => void frames.push(frame))))
    yield* TestRuntime.nextTurn
    return {
      frames,
      fiber,
      events: () => frames.filter((f) => f._tag === "Event"),
      shown: () => frames.map(show)
    }
  })

const setup = (logOptions: EventLog.Options = options) =>
  Effect.gen(function*() {
    const storage = yield* TestRuntime.store
    const events = yield* Events.Events
    const eventStore = yield* EventStore.EventStore
    const log = yield* EventLog.make(logOptions)
    const bot = yield* storage.insertBot(TestRuntime.botInput("7:token", { manage_enabled: true }))
    /** Every entry in the log, oldest first. */
    const logged = Effect.map(eventStore.readEvents({ after: 0, limit: 10_000 }), (entries) => entries)
    /** Publishes `count` new messages of the bot in chat 42, each on its own, and lets the log take them. */
    let next = 1
    const arrive = (count: number, chatId = 42) =>
      Effect.gen(function*() {
        for (let i = 0; i < count; i++) {
          yield* events.publish(Events.Event.MessagesStored({ bot_id: bot.id, messages: [message(bot.id, chatId, next++)] }))
        }
        yield* settle
      })
    /** Lets the log's writer and the streams take what was published. */
    const settle = Effect.repeatN(TestRuntime.nextTurn, 6)
    return { storage, events, eventStore, log, bot, logged, arrive, settle }
  })

const run = <A, E>(body: Effect.Effect<A, E, Scope.Scope | Stores.Stores | Events.Events>) =>
  body.pipe(Effect.provide(TestRuntime.stores), Effect.provide(quiet))

describe("EventLog", () => {
  it.scoped("turns bus events into entries: messages, edits, deletions, a chat and a bot once per batch, deliveries", () =>
    run(Effect.gen(function*() {
      const { bot, events, log, settle, storage } = yield* setup()
      const client = yield* follow(log.stream({}))
      const hello = message(bot.id, 42, 5)
      yield* storage.saveMessage(hello)
      yield* storage.markMessagesDeleted(bot.id, 42, [5])
      const delivery: Delivery.Delivery = {
        id: 3,
        bot_id: bot.id,
        update_id: 9,
        url: "https://user:pass@backend.example/hook",
        payload: "{\"update_id\":9}",
        status: "dead",
        attempts: 4,
        next_attempt_at: "2025-01-01T00:00:00.000Z",
        last_error: "HTTP 502",
        created_at: "2025-01-01T00:00:00.000Z",
        updated_at: "2025-01-02T00:00:00.000Z"
      }
      yield* events.publish(Events.Event.MessagesStored({ bot_id: bot.id, messages: [hello] }))
      yield* events.publish(Events.Event.ChatChanged({ bot_id: bot.id, chat_id: 42 }))
      yield* events.publish(Events.Event.MessageEdited({ bot_id: bot.id, message: { ...hello, text: "edited", edit_date: 1 } }))
      yield* events.publish(Events.Event.ChatChanged({ bot_id: bot.id, chat_id: 42 }))
      yield* events.publish(Events.Event.MessagesDeleted({ bot_id: bot.id, chat_id: 42, message_ids: [5, 6] }))
      yield* events.publish(Events.Event.BotStatusChanged({ bot_id: bot.id, running: true }))
      yield* events.publish(Events.Event.BotChanged({ id: bot.id }))
      yield* events.publish(Events.Event.DeliveryChanged({ delivery }))
      yield* events.publish(Events.Event.BotChanged({ id: 999 }))
      yield* settle
      const received = client.events().map((f) => f._tag === "Event" ? { name: f.name, data: JSON.parse(f.data) } : f)
      assert.deepStrictEqual(received.map((e) => e.name), [
        "message",
        "message_edited",
        "chat",
        "message_deleted",
        "bot",
        "delivery",
        "bot"
      ])
      assert.deepStrictEqual(received[0]!.data, { type: "message", bot_id: bot.id, chat_id: 42, message: hello })
      assert.strictEqual(received[1]!.data.message.text, "edited")
      assert.deepStrictEqual(received[2]!.data, { type: "chat", bot_id: bot.id, chat_id: 42 }, "once, where the last was")
      assert.deepStrictEqual(received[3]!.data.message, { ...hello, deleted: true }, "only the stored message 5")
      const shown = received[4]!.data
      assert.deepStrictEqual([shown.type, shown.bot_id, shown.chat_id], ["bot", bot.id, 0])
      assert.strictEqual(shown.bot.running, true)
      assert.strictEqual(shown.bot.token, "7:…")
      assert.notInclude(JSON.stringify(shown), "7:token")
      const { payload: _, ...withoutPayload } = delivery
      assert.deepStrictEqual(received[5]!.data, {
        type: "delivery",
        bot_id: bot.id,
        chat_id: 0,
        delivery: { ...withoutPayload, url: "https://backend.example/hook" }
      })
      assert.deepStrictEqual(received[6]!.data, { type: "bot", bot_id: 999, chat_id: 0, bot: null })
      const ids = client.events().map((f) => f._tag === "Event" ? f.id : 0)
      assert.deepStrictEqual(ids, [...ids].sort((a, b) => a - b))
      for (const { data } of received) Schema.decodeUnknownSync(LiveEvent.LiveEvent)(data)
    })))

  it.scoped("the pipeline's new and edited incoming messages become `message`, `message_edited` and one `chat`", () =>
    run(Effect.gen(function*() {
      const { bot, log, settle, storage } = yield* setup()
      const client = yield* follow(log.stream({}))
      const chat = { id: 42, type: "private", first_name: "Ann" }
      const from = { id: 42, is_bot: false, first_name: "Ann" }
      const payloads = [
        { update_id: 1, message: { message_id: 5, date: 1_750_000_000, chat, from, text: "helo" } },
        { update_id: 2, edited_message: { message_id: 5, date: 1_750_000_000, edit_date: 1_750_000_009, chat, from, text: "hello" } }
      ]
      yield* storage.commitUpdates(
        bot.id,
        payloads.map((p) => ({ update_id: p.update_id, payload: JSON.stringify(p), received_at: "2025-01-01T00:00:00.000Z" })),
        3
      )
      yield* Pipeline.drain(bot.id, { current: () => bot })
      yield* settle
      assert.deepStrictEqual(
        client.events().map((f) => f._tag === "Event" ? [f.name, JSON.parse(f.data).message?.text ?? ""] : []),
        [["message", "helo"], ["message_edited", "hello"], ["chat", ""]]
      )
    })))

  it.scoped("`chat` events carry the chat that ChatViews finds", () =>
    run(Effect.gen(function*() {
      const { bot, events, log, settle } = yield* setup().pipe(
        Effect.provideService(EventLog.ChatViews, (botId, chatId) =>
          Effect.succeed(chatId === 42 ? Option.some({ bot_id: botId, chat_id: chatId, title: "Ann" }) : Option.none()))
      )
      const client = yield* follow(log.stream({}))
      yield* events.publish(Events.Event.ChatChanged({ bot_id: bot.id, chat_id: 42 }))
      yield* events.publish(Events.Event.ChatChanged({ bot_id: bot.id, chat_id: 43 }))
      yield* settle
      assert.deepStrictEqual(client.events().map((f) => f._tag === "Event" ? JSON.parse(f.data) : f), [
        { type: "chat", bot_id: bot.id, chat_id: 42, chat: { bot_id: bot.id, chat_id: 42, title: "Ann" } },
        { type: "chat", bot_id: bot.id, chat_id: 43 }
      ])
    })))

  it.scoped("a heartbeat on connect, then one every interval, whether or not events flow", () =>
    run(Effect.gen(function*() {
      const { arrive, log } = yield* setup({ ...options, heartbeat: Duration.seconds(15) })
      const client = yield* follow(log.stream({}))
      const beats = () => client.frames.filter((f) => f._tag === "Heartbeat").length
      assert.strictEqual(beats(), 1, "one on connect")
      yield* TestClock.adjust("14999 millis")
      yield* arrive(2)
      assert.strictEqual(beats(), 1)
      yield* TestClock.adjust("1 millis")
      yield* TestRuntime.nextTurn
      assert.strictEqual(beats(), 2)
      yield* TestClock.adjust("15 seconds")
      yield* TestRuntime.nextTurn
      assert.strictEqual(beats(), 3)
      assert.deepStrictEqual(client.shown().filter((s) => s !== "h").length, 2)
    })))

  it.scoped("filters by bot and chat; events of no chat go to streams of all chats only", () =>
    run(Effect.gen(function*() {
      const { arrive, bot, events, log, settle } = yield* setup()
      const all = yield* follow(log.stream({}))
      const mine = yield* follow(log.stream({ bots: [bot.id] }))
      const other = yield* follow(log.stream({ bots: [bot.id + 1] }))
      const chat = yield* follow(log.stream({ bots: [bot.id], chatId: 43 }))
      yield* arrive(1, 42)
      yield* arrive(1, 43)
      yield* events.publish(Events.Event.BotChanged({ id: bot.id }))
      yield* settle
      const names = (c: { readonly events: () => Array<EventLog.Frame> }) =>
        c.events().map((f) => f._tag === "Event" ? `${f.name}@${JSON.parse(f.data).chat_id}` : "")
      assert.deepStrictEqual(names(all), ["message@42", "message@43", "bot@0"])
      assert.deepStrictEqual(names(mine), ["message@42", "message@43", "bot@0"])
      assert.deepStrictEqual(names(other), [])
      assert.deepStrictEqual(names(chat), ["message@43"])
    })))

  it.scoped("replays what came after the last id, then goes on live, without gaps or duplicates", () =>
    run(Effect.gen(function*() {
      const { arrive, bot, events, log, logged, settle } = yield* setup()
      yield* arrive(5)
      const ids = (yield* logged).map((e) => e.id)
      const client = yield* follow(log.stream({ bots: [bot.id], lastEventId: ids[1]! }))
      yield* arrive(2)
      assert.deepStrictEqual(client.events().map((f) => f._tag === "Event" ? f.id : 0), [
        ...ids.slice(2),
        ...(yield* logged).slice(5).map((e) => e.id)
      ])
      // Streams that connect while events are being appended and fanned out each get every event once, in order.
      const clients: Array<{ readonly from: number; readonly events: () => Array<EventLog.Frame> }> = []
      for (let round = 0; round < 20; round++) {
        yield* events.publish(Events.Event.MessagesStored({ bot_id: bot.id, messages: [message(bot.id, 42, 100 + round)] }))
        const newest = (yield* logged).at(-1)!.id
        const from = newest - (round % 3)
        const started = yield* follow(log.stream({ lastEventId: from }))
        clients.push({ from, events: started.events })
        if (round % 2 === 0) yield* TestRuntime.nextTurn
      }
      yield* settle
      const last = (yield* logged).at(-1)!.id
      for (const { events: received, from } of clients) {
        const got = received().map((f) => f._tag === "Event" ? f.id : 0)
        assert.deepStrictEqual(got, Array.from({ length: last - from }, (_, i) => from + 1 + i), `from ${from}`)
      }
    })))

  it.scoped("an id the log no longer reaches back to (or never held) gets a reset with the newest id, then live", () =>
    run(Effect.gen(function*() {
      const { arrive, log, logged } = yield* setup({
        ...options,
        keep: 2,
        retention: Duration.hours(1),
        sweepInterval: Duration.days(100)
      })
      yield* arrive(5)
      yield* TestClock.adjust("2 hours")
      assert.strictEqual(yield* EventLog.sweep({ keep: 2, retention: Duration.hours(1) }), 3)
      const kept = (yield* logged).map((e) => e.id)
      assert.strictEqual(kept.length, 2)
      const tooOld = yield* follow(log.stream({ lastEventId: kept[0]! - 2 }))
      const fromOldest = yield* follow(log.stream({ lastEventId: kept[0]! - 1 }))
      const unknown = yield* follow(log.stream({ lastEventId: kept[1]! + 100 }))
      yield* arrive(1)
      const live = (yield* logged).at(-1)!.id
      assert.deepStrictEqual(tooOld.shown(), ["h", `r${kept[1]}`, `${live}:message`])
      assert.deepStrictEqual(fromOldest.shown(), ["h", `${kept[0]}:message`, `${kept[1]}:message`, `${live}:message`])
      assert.deepStrictEqual(unknown.shown(), ["h", `r${kept[1]}`, `${live}:message`])
    })))

  it.scoped("retention keeps 24 h and the newest entries, sweeping every interval", () =>
    run(Effect.gen(function*() {
      const { arrive, logged } = yield* setup({
        ...options,
        keep: 3,
        retention: Duration.hours(24),
        sweepInterval: Duration.hours(1)
      })
      const texts = Effect.map(logged, (entries) => entries.map((e) => JSON.parse(e.data).message.id))
      yield* arrive(5)
      yield* TestClock.adjust("23 hours")
      yield* arrive(2)
      assert.deepStrictEqual(yield* texts, [1, 2, 3, 4, 5, 6, 7], "nothing is older than 24 h")
      yield* TestClock.adjust("2 hours")
      yield* TestRuntime.until(() => false)
      assert.deepStrictEqual(yield* texts, [5, 6, 7], "older than 24 h and not among the newest 3")
      yield* TestClock.adjust("48 hours")
      yield* TestRuntime.until(() => false)
      assert.deepStrictEqual(yield* texts, [5, 6, 7], "the newest 3 stay, however old")
    })))

  it.scoped("a stream more than maxPending behind is cut off; the others go on and the writer never waits", () =>
    run(Effect.gen(function*() {
      const { arrive, log, logged } = yield* setup({ ...options, maxPending: 5 })
      const cut = yield* Deferred.make<void>()
      const stuck = yield* Effect.fork(
        Stream.runForEach(log.stream({ onCutOff: Deferred.succeed(cut, undefined) }), () => Effect.never)
      )
      const reader = yield* follow(log.stream({}))
      yield* TestRuntime.nextTurn
      assert.strictEqual(log.streams(), 2)
      for (let i = 0; i < 5; i++) yield* arrive(1)
      assert.isFalse(yield* Deferred.isDone(cut), "5 waiting is not more than 5")
      for (let i = 0; i < 15; i++) yield* arrive(1)
      assert.isTrue(yield* Deferred.isDone(cut))
      assert.strictEqual(log.streams(), 1)
      assert.strictEqual(reader.events().length, 20)
      assert.strictEqual((yield* logged).length, 20)
      yield* Fiber.interrupt(stuck)
    })))

  it.scoped("close (as a finalizer runs it) ends every stream, cuts off those not ended within the grace, refuses new ones", () =>
    run(Effect.gen(function*() {
      const { arrive, log } = yield* setup()
      const cut = yield* Deferred.make<string>()
      const reader = yield* follow(log.stream({ onCutOff: Deferred.succeed(cut, "reader") }))
      const stuck = yield* Effect.fork(
        Stream.runForEach(log.stream({ onCutOff: Deferred.succeed(cut, "stuck") }), () => Effect.never)
      )
      yield* arrive(1)
      const closing = yield* Effect.fork(Effect.uninterruptible(log.close))
      yield* TestRuntime.nextTurn
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(reader.fiber)), "the reader's stream ended")
      assert.isFalse(yield* Deferred.isDone(cut))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(closing)
      assert.strictEqual(yield* Deferred.await(cut), "stuck")
      assert.deepStrictEqual(yield* Stream.runCollect(log.stream({})).pipe(Effect.map((c) => [...c])), [])
      yield* Fiber.interrupt(stuck)
    })))

  it.scoped("a log closed cleanly ends with a stop marker; one that was not starts with a reset that replays show", () =>
    run(Effect.gen(function*() {
      const eventStore = yield* EventStore.EventStore
      const types = Effect.map(eventStore.readEvents({ after: 0, limit: 100 }), (entries) => entries.map((e) => e.type))
      const first = yield* Scope.make()
      const { arrive } = yield* setup().pipe(Scope.extend(first))
      yield* arrive(2)
      yield* Scope.close(first, Exit.void)
      assert.deepStrictEqual(yield* types, ["message", "message", "stop"])

      const second = yield* Scope.make()
      yield* EventLog.make(options).pipe(Scope.extend(second))
      yield* TestRuntime.nextTurn
      assert.deepStrictEqual(yield* types, ["message", "message", "stop"], "no reset after a clean stop")
      yield* Scope.close(second, Exit.void)

      // A crash: an entry appended, and the log never closed.
      yield* eventStore.appendEvents([
        { bot_id: 1, chat_id: 42, type: "message", data: "{}", created_at: "2025-01-01T00:00:00.000Z" }
      ])
      const restarted = yield* EventLog.make(options)
      yield* TestRuntime.nextTurn
      const entries = yield* eventStore.readEvents({ after: 0, limit: 100 })
      assert.deepStrictEqual(entries.map((e) => e.type), ["message", "message", "stop", "stop", "message", "reset"])
      const client = yield* follow(restarted.stream({ lastEventId: entries[0]!.id }))
      yield* TestRuntime.nextTurn
      assert.deepStrictEqual(client.shown(), [
        "h",
        `${entries[1]!.id}:message`,
        `${entries[4]!.id}:message`,
        `r${entries[5]!.id}`
      ])
    })))
})
