/**
 * The offline demo (`botrelay demo`, `pnpm demo`): the real server on a throwaway database against a
 * simulated Telegram (FakeTelegram), with a shop's support desk inside it. Three bots: a support bot
 * customers write to privately (its backend is DemoBackend), a staff bot in the staff group, and a
 * news bot posting to a channel. A support-desk route copies customers' messages into the staff group;
 * the staff's replies there go back to the customers by the route's reverse path. A seeded script has
 * about twenty people write, press buttons and send photos over a few minutes, then a quieter trickle
 * goes on until the demo is stopped. Nothing leaves the machine and no token is needed.
 *
 * This module loads `@botrelay/testing`; only the `demo` command imports it.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import {
  Account,
  Accounts,
  ApiKeys,
  AuditLog,
  Bot,
  Bots,
  Message,
  Messages,
  Route,
  Routes,
  Supervisor
} from "@botrelay/core"
import type { Botrelay } from "@botrelay/node"
import type { BotApi } from "@botrelay/telegram"
import { FakeTelegram } from "@botrelay/testing"
import { Console, Context, Deferred, Duration, Effect, Layer, LogLevel, Option, Queue, Redacted, Schema } from "effect"
import * as Config from "./Config.js"
import * as DemoBackend from "./DemoBackend.js"
import * as Cast from "./DemoCast.js"
import * as DemoPictures from "./DemoPictures.js"
import * as Main from "./Main.js"
import * as StartHeap from "./StartHeap.js"

/** How the demo runs. */
export interface Options {
  /** The port on 127.0.0.1; 0 picks a free one. */
  readonly port: number
  /** How much faster than real time the script runs (1: over a few minutes). */
  readonly speed?: number
  /** How many simulated customers write to the support bot (20 by default). */
  readonly people?: number
  /** How many extra people each write once to the news bot at the start, to fill the chat list. */
  readonly chats?: number
  /** The script's seed: the same seed gives the same people, words and choices. */
  readonly seed?: number
  /** Polling and delivery timings; `Supervisor.defaults` by default. */
  readonly runtime?: Supervisor.Options
}

/** A demo bot: its id in Botrelay and its account at the simulated Telegram. */
export interface DemoBot {
  readonly id: number
  readonly name: string
  readonly telegram: FakeTelegram.FakeBot
}

/** The running demo: where to sign in, and everything in its world. */
export interface World {
  /** The console's address, e.g. `http://127.0.0.1:8080/`. */
  readonly url: string
  /** The console account made for this run; the password is random and never stored in clear. */
  readonly login: { readonly username: string; readonly password: string }
  /** An admin API key for this run. */
  readonly adminKey: string
  /** The throwaway data folder, removed when the demo stops. */
  readonly dir: string
  readonly fake: FakeTelegram.FakeTelegram
  readonly backend: DemoBackend.Backend
  readonly support: DemoBot
  readonly staff: DemoBot
  readonly news: DemoBot
  readonly staffGroup: BotApi.Chat
  readonly channel: BotApi.Chat
  readonly route: Route.Route
  readonly customers: ReadonlyArray<BotApi.User>
  readonly staffMembers: ReadonlyArray<BotApi.User>
}

/** The running demo. */
export class Demo extends Context.Tag("@botrelay/server/Demo")<Demo, World>() {}

/** The console account the demo creates. */
export const username = "demo"

/** Telegram users of the simulated people. */
const userOf = (fake: FakeTelegram.FakeTelegram, person: Cast.Person): BotApi.User =>
  fake.addUser({
    first_name: person.first_name,
    last_name: person.last_name,
    ...(person.username === "" ? {} : { username: person.username }),
    language_code: person.language
  })

/** A one-time password: 16 characters in four groups, easy to type. */
const newPassword = (): string => {
  const alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
  const bytes = randomBytes(16)
  const characters = Array.from(bytes, (b) => alphabet[b % alphabet.length]!)
  return [0, 4, 8, 12].map((i) => characters.slice(i, i + 4).join("")).join("-")
}

/** Registers a bot as an admin would, recorded in the audit log as Botrelay's own doing. */
const addBot = (input: Readonly<Record<string, unknown>>) =>
  Schema.decodeUnknown(Bot.NewBot)(input).pipe(
    Effect.flatMap((bot) => Effect.flatMap(Bots.Bots, (bots) => bots.add(bot))),
    Effect.tap((bot) =>
      AuditLog.recordDone(AuditLog.system, "bots.add", {
        target_type: "bot",
        target_id: bot.id,
        details: { name: bot.name }
      })
    )
  )

/** The demo's world inside the running server: bots, chats, people, the route and the console account. */
const setUp = (
  options: Options,
  fake: FakeTelegram.FakeTelegram,
  backend: DemoBackend.Backend,
  secret: string,
  dir: string,
  adminKey: string
) =>
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address as HttpServer.TcpAddress
    const baseUrl = `http://127.0.0.1:${address.port}`

    const supportBot = fake.addBot({ username: "northwind_support_bot", first_name: "Northwind Support" })
    const staffBot = fake.addBot({ username: "northwind_staff_bot", first_name: "Northwind Staff Desk" })
    const newsBot = fake.addBot({ username: "northwind_news_bot", first_name: "Northwind News" })
    const staffMembers = Cast.staff.map((person) => userOf(fake, person))
    const staffGroup = fake.addGroup({
      type: "supergroup",
      title: "Northwind support team",
      members: [staffBot.id],
      creator: staffMembers[0]!.id
    })
    for (const member of staffMembers.slice(1)) fake.addMember(staffGroup.id, member.id)
    fake.setRights(staffGroup.id, staffBot.id, {
      can_manage_chat: true,
      can_delete_messages: true,
      can_restrict_members: true,
      can_pin_messages: true
    })
    const channel = fake.addGroup({
      type: "channel",
      title: "Northwind News",
      username: "northwind_news",
      members: [newsBot.id]
    })
    fake.setRights(channel.id, newsBot.id, { can_post_messages: true, can_edit_messages: true, can_delete_messages: true })
    const customers = Array.from({ length: options.people ?? 20 }, (_, i) => userOf(fake, Cast.personAt(i)))

    const support = yield* addBot({
      token: supportBot.token,
      name: "Northwind Support",
      manage_enabled: true,
      proxy_enabled: true,
      backend_url: backend.url,
      secret_token: secret,
      description: "Customers write to it in private chats; its backend greets them and offers topics."
    })
    const staff = yield* addBot({
      token: staffBot.token,
      name: "Northwind Staff",
      manage_enabled: true,
      description: "In the staff group, where customers' messages arrive and the staff answer them."
    })
    const news = yield* addBot({
      token: newsBot.token,
      name: "Northwind News",
      manage_enabled: true,
      description: "Posts the shop's news to its channel."
    })
    const route = yield* Schema.decodeUnknown(Route.NewRoute)({
      source_bot_id: support.id,
      target_bot_id: staff.id,
      condition_type: "regex",
      condition_value: "^(?:[^/]|$)",
      action: "copy",
      target_chat_id: staffGroup.id,
      description: "Support desk: customers' messages (not commands) to the staff group; replies there go back."
    }).pipe(Effect.flatMap((input) => Effect.flatMap(Routes.Routes, (routes) => routes.add(input))))
    yield* AuditLog.recordDone(AuditLog.system, "routes.add", { target_type: "route", target_id: route.id })
    const password = newPassword()
    const account = yield* Schema.decodeUnknown(Account.NewAccount)({
      username,
      display_name: "Demo admin",
      role: "admin",
      password
    }).pipe(Effect.flatMap((input) => Effect.flatMap(Accounts.Accounts, (accounts) => accounts.create(input))))
    yield* AuditLog.recordDone(AuditLog.system, "accounts.create", {
      target_type: "account",
      target_id: account.id,
      details: { username: account.username, role: account.role, bot_ids: account.bot_ids }
    })
    backend.connect(`${baseUrl}/tgapi/bot${supportBot.token}`)
    seedChats(fake, newsBot, customers.length, options.chats ?? 0)

    const world: World = {
      url: `${baseUrl}/`,
      login: { username, password },
      adminKey,
      dir,
      fake,
      backend,
      support: { id: support.id, name: support.name, telegram: supportBot },
      staff: { id: staff.id, name: staff.name, telegram: staffBot },
      news: { id: news.id, name: news.name, telegram: newsBot },
      staffGroup,
      channel,
      route,
      customers,
      staffMembers
    }
    yield* Effect.forkScoped(script(world, options))
    return world
  }).pipe(Effect.orDie)

/**
 * `count` more people, each writing once to the news bot, all queued at once so that Botrelay takes
 * them in full batches (100 updates a poll).
 */
const seedChats = (fake: FakeTelegram.FakeTelegram, bot: FakeTelegram.FakeBot, after: number, count: number) => {
  for (let i = 0; i < count; i++) {
    const person = Cast.personAt(after + i)
    const line = Cast.subscriberLines[i % Cast.subscriberLines.length]!
    fake.userSends(bot.id, { user: userOf(fake, person), text: Cast.say(line, person.language) })
  }
}

/** What a customer is about. */
interface Case {
  readonly user: BotApi.User
  readonly person: Cast.Person
  readonly topic: Cast.Topic
  readonly order: string
}

/** A customer's question the staff answer once it shows in the staff group. */
interface Question extends Case {
  /** The text, as it will show in the group (under the line naming the customer). */
  readonly text: string
}

/** How long the busy first part of the script lasts, in script seconds; a trickle follows. */
const busySeconds = 240

/** The people's first messages spread over this many script seconds. */
const arrivalSeconds = 180

/** The script: customers, staff and news, all at once, until interrupted. */
const script = (world: World, options: Options): Effect.Effect<void, never, Messages.Messages> =>
  Effect.gen(function*() {
    const { customers, fake, staffGroup, staffMembers } = world
    const speed = options.speed ?? 1
    const seed = options.seed ?? 1
    /** Waits this many script seconds. */
    const pause = (seconds: number) => Effect.sleep(Duration.millis((seconds * 1000) / speed))
    /** How long, in real time, to wait for something Botrelay does in answer: a few script minutes, at least 30 s. */
    const patience = Duration.millis(Math.max(30_000, (600 * 1000) / speed))
    const questions: Array<Question> = []
    const cases = new Map<number, Case>()

    /**
     * Starts looking out for the first message sent from now on that matches; the effect it returns
     * waits for it, or gives none after a few script minutes.
     */
    const expectSent = (predicate: (sent: FakeTelegram.SentMessage) => boolean) =>
      Effect.map(Deferred.make<FakeTelegram.SentMessage>(), (deferred) => {
        const unsubscribe = fake.onSent((sent) => {
          if (!predicate(sent)) return
          unsubscribe()
          Deferred.unsafeDone(deferred, Effect.succeed(sent))
        })
        return Deferred.await(deferred).pipe(Effect.timeoutOption(patience), Effect.ensuring(Effect.sync(unsubscribe)))
      })

    const supportSentTo = (user: BotApi.User) => (sent: FakeTelegram.SentMessage) =>
      sent.botId === world.support.telegram.id && sent.message.chat.id === user.id

    /** A customer writes to the support bot; a question waits for the staff's answer. */
    const customerSends = (
      theCase: Case,
      content: { readonly text: string } | { readonly photo: DemoPictures.Picture; readonly caption: string },
      question = false
    ) =>
      Effect.sync(() => {
        if ("text" in content) {
          fake.userSends(world.support.telegram.id, { user: theCase.user, text: content.text })
          if (question) questions.push({ ...theCase, text: content.text })
        } else {
          fake.userSends(world.support.telegram.id, { user: theCase.user, photo: content.photo, caption: content.caption })
        }
      })

    /** `/start`, the greeting with its buttons, a press on one of them. */
    const startAndPress = (theCase: Case, random: Cast.Random) =>
      Effect.gen(function*() {
        const greeting = yield* expectSent((sent) =>
          supportSentTo(theCase.user)(sent) && sent.message.reply_markup?.inline_keyboard !== undefined
        )
        yield* customerSends(theCase, { text: "/start" })
        const message = yield* greeting
        if (Option.isNone(message)) return
        yield* pause(random.between(2, 7))
        yield* Effect.sync(() =>
          fake.userPresses(world.support.telegram.id, message.value.message, theCase.topic.data, { user: theCase.user })
        )
      })

    const say = (theCase: Case, line: Cast.Line) =>
      Cast.say(line, theCase.person.language, { first: theCase.user.first_name, order: theCase.order })

    /** One customer's first visit: start, press, ask, maybe a photo and more, then thanks once answered. */
    const customer = (index: number) =>
      Effect.gen(function*() {
        const random = Cast.random(seed * 7919 + index)
        const user = customers[index]!
        const theCase: Case = {
          user,
          person: Cast.personAt(index),
          topic: random.pick(Cast.topics),
          order: `NW-${random.int(10_000, 99_999)}`
        }
        cases.set(user.id, theCase)
        yield* pause((index * arrivalSeconds) / customers.length + random.between(0, 6))
        yield* startAndPress(theCase, random)
        yield* pause(random.between(6, 18))
        const answered = yield* expectSent((sent) =>
          supportSentTo(user)(sent) && sent.message.reply_to_message !== undefined
        )
        yield* customerSends(theCase, { text: say(theCase, random.pick(theCase.topic.issues)) }, true)
        if (random.chance(0.45)) {
          yield* pause(random.between(5, 15))
          yield* customerSends(theCase, {
            photo: DemoPictures.photo(theCase.topic.photo.subject, index),
            caption: say(theCase, random.pick(theCase.topic.photo.captions))
          })
        }
        if (random.chance(0.3)) {
          yield* pause(random.between(10, 30))
          yield* customerSends(theCase, { text: say(theCase, random.pick(theCase.topic.followUps)) })
        }
        if (Option.isSome(yield* answered) && random.chance(0.7)) {
          yield* pause(random.between(4, 15))
          yield* customerSends(theCase, { text: say(theCase, random.pick(Cast.thanks)) })
        }
      })

    /** The staff answer customers' questions as they show up in the group, each a reply to its message. */
    const answering = Effect.gen(function*() {
      const random = Cast.random(seed * 31 + 1)
      const arrivals = yield* Queue.unbounded<FakeTelegram.SentMessage>()
      yield* Effect.acquireRelease(
        Effect.sync(() =>
          fake.onSent((sent) => {
            if (sent.botId === world.staff.telegram.id && sent.message.chat.id === staffGroup.id) {
              Queue.unsafeOffer(arrivals, sent)
            }
          })
        ),
        (unsubscribe) => Effect.sync(unsubscribe)
      )
      while (true) {
        const sent = yield* Queue.take(arrivals)
        const body = sent.message.text ?? sent.message.caption ?? ""
        const at = questions.findIndex((q) => body.includes(q.text) && body.includes(`id ${q.user.id}`))
        if (at < 0) continue
        const theCase = questions.splice(at, 1)[0]!
        const member = theCase.person.language === "ru" && random.chance(0.7)
          ? staffMembers[1]!
          : random.pick(staffMembers)
        const reply = say(theCase, random.pick(theCase.topic.answers))
        yield* Effect.fork(
          pause(random.between(8, 35)).pipe(Effect.andThen(Effect.sync(() =>
            fake.userSends(world.staff.telegram.id, {
              chat: staffGroup.id,
              user: member,
              text: reply,
              reply_to_message_id: sent.message.message_id
            })
          )))
        )
      }
    }).pipe(Effect.scoped)

    /** A staff member says something to the others; sometimes a colleague acknowledges it (a reply that stays in the group). */
    const chatter = (random: Cast.Random, line: Cast.Line) =>
      Effect.gen(function*() {
        const speaker = random.int(0, staffMembers.length - 1)
        const language = Cast.staff[speaker]!.language
        const said = fake.userSends(world.staff.telegram.id, {
          chat: staffGroup.id,
          user: staffMembers[speaker]!,
          text: Cast.say(line, language)
        })
        if (!random.chance(0.5)) return
        yield* pause(random.between(5, 20))
        const other = (speaker + random.int(1, staffMembers.length - 1)) % staffMembers.length
        fake.userSends(world.staff.telegram.id, {
          chat: staffGroup.id,
          user: staffMembers[other]!,
          text: Cast.say(random.pick(Cast.acknowledgements), Cast.staff[other]!.language),
          reply_to_message_id: said.message_id
        })
      })

    const staffTalk = Effect.gen(function*() {
      const random = Cast.random(seed * 131 + 2)
      let next = 0
      yield* pause(5)
      while (true) {
        yield* chatter(random, Cast.chatter[next++ % Cast.chatter.length]!)
        yield* pause(random.between(50, 110))
      }
    })

    /** The news bot posts to its channel through Botrelay, as an admin would with POST /api/messages/send. */
    const newsDesk = Effect.gen(function*() {
      const messages = yield* Messages.Messages
      const random = Cast.random(seed * 17 + 3)
      let posted = 0
      let elapsed = random.between(15, 30)
      yield* pause(elapsed)
      while (true) {
        const text = Cast.news[posted++ % Cast.news.length]!
        yield* Schema.decodeUnknown(Message.SendMessage)({ bot_id: world.news.id, chat_id: world.channel.id, text }).pipe(
          Effect.flatMap(messages.send),
          Effect.catchAll((e) => Effect.logDebug("the demo's news post failed", e))
        )
        const wait = elapsed < busySeconds ? random.between(60, 90) : random.between(300, 600)
        elapsed += wait
        yield* pause(wait)
      }
    })

    /** After the busy part: now and then a customer comes back, sends a photo, or the staff talk. */
    const trickle = Effect.gen(function*() {
      const random = Cast.random(seed * 101 + 4)
      yield* pause(busySeconds)
      while (true) {
        yield* pause(random.between(20, 60))
        const known = [...cases.values()]
        const roll = random.next()
        const own = Cast.random(random.int(0, 2 ** 31))
        if (known.length === 0 || roll < 0.2) {
          yield* Effect.fork(chatter(own, random.pick(Cast.chatter)))
          continue
        }
        const theCase = random.pick(known)
        if (roll < 0.65) {
          yield* customerSends(theCase, { text: say(theCase, random.pick(theCase.topic.followUps)) }, true)
        } else if (roll < 0.85) {
          const again = { ...theCase, topic: random.pick(Cast.topics) }
          cases.set(theCase.user.id, again)
          yield* Effect.fork(startAndPress(again, own))
        } else {
          yield* customerSends(theCase, {
            photo: DemoPictures.photo(theCase.topic.photo.subject, random.int(0, 9)),
            caption: say(theCase, random.pick(theCase.topic.photo.captions))
          })
        }
      }
    })

    yield* Effect.all(
      [answering, staffTalk, newsDesk, trickle, ...customers.map((_, i) => customer(i))],
      { concurrency: "unbounded", discard: true }
    )
  })

/**
 * The demo: a simulated Telegram, the backend, and the whole server on a throwaway database in a temp
 * folder, with the demo's world set up and its script running. Everything is stopped, and the folder
 * removed, when the layer is released.
 */
export const layer = (
  options: Options
): Layer.Layer<Demo | HttpServer.HttpServer | Botrelay.Services, Main.StartError> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "botrelay-demo-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const fake = yield* FakeTelegram.make()
    const secret = randomBytes(24).toString("base64url")
    const backend = yield* DemoBackend.make({ secret })
    const adminKey = Redacted.value(yield* ApiKeys.generateKey)
    const config = Config.fromValues({
      port: String(options.port),
      host: "127.0.0.1",
      database: join(dir, "botrelay.db"),
      "telegram-api": fake.apiRoot,
      "admin-key": adminKey,
      "log-level": "warn",
      "backend-allow-private": "true",
      "api-rate-limit": "0"
    }, {})
    return Layer.scoped(Demo, setUp(options, fake, backend, secret, dir, adminKey)).pipe(
      Layer.provideMerge(Main.layer(config, options.runtime ?? Supervisor.defaults))
    )
  }))

/** What the demo prints once it runs. */
export const banner = (world: World): string =>
  [
    "Botrelay demo is running (simulated Telegram, nothing leaves this machine).",
    `  Console:  ${world.url}`,
    `  Sign in:  ${world.login.username} / ${world.login.password}`,
    `  API key:  ${world.adminKey}`,
    `  Data:     ${world.dir} (deleted when the demo stops)`,
    `${world.customers.length} customers write to ${world.support.name}; the staff answer them in "${world.staffGroup.title}".`,
    "Press Ctrl-C to stop."
  ].join("\n")

/** Why the socket could not be opened, in words. */
const serveProblem = (error: HttpServerError.ServeError, port: number): string => {
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return code === "EADDRINUSE"
    ? `port ${port} is in use; choose another with --port (--port 0 picks a free one)`
    : `cannot listen on 127.0.0.1:${port}: ${String((error.cause as Error | undefined)?.message ?? error.cause)}`
}

/** Runs the demo in this process until SIGINT or SIGTERM, printing the console address and the login. */
export const main = (options: Options) =>
  Layer.launch(
    Layer.effectDiscard(
      Effect.flatMap(Demo, (world) => Console.log(banner(world))).pipe(Effect.zipRight(Effect.sync(StartHeap.release)))
    ).pipe(Layer.provide(layer(options)))
  ).pipe(
    Effect.catchTag("ServeError", (error) =>
      Effect.zipRight(
        Console.error(`botrelay: ${serveProblem(error, options.port)}`),
        Effect.sync(() => process.exit(1))
      )),
    Effect.provide(Main.loggerLayer({ logLevel: LogLevel.Warning })),
    NodeRuntime.runMain({ disablePrettyLogger: true })
  )
