import { FakeTelegram } from "@botrelay/testing"
import { assert } from "vitest"
import { eventually, type ServerOptions, startServer, type Storage, type TestServer } from "./Harness.js"

/** What the inbox tests (chats, people, stats) run against: a fake whose clock they set, the server, bots. */
export interface InboxWorld {
  readonly fake: FakeTelegram.FakeTelegram
  readonly server: TestServer
  /** The fake's clock, Unix seconds: the `date` of what it creates from now on. */
  clock: number
  readonly close: () => Promise<void>
}

/** A fake with a settable clock and the server against it. */
export const startWorld = async (
  clock: number,
  options: { readonly storage?: Storage; readonly runtime?: ServerOptions["runtime"] } = {}
): Promise<InboxWorld> => {
  const world = { clock } as InboxWorld & { fake: FakeTelegram.FakeTelegram; server: TestServer }
  world.fake = await FakeTelegram.start({ now: () => world.clock })
  world.server = await startServer({
    ...(options.storage === undefined ? {} : { storage: options.storage }),
    ...(options.runtime === undefined ? {} : { runtime: options.runtime }),
    telegramApi: world.fake.apiRoot
  })
  ;(world as { close: () => Promise<void> }).close = async () => {
    await world.server.close()
    await world.fake.close()
  }
  return world
}

/** Registers a fake bot; with history unless `manage_enabled` is false. */
export const addBot = async (
  world: InboxWorld,
  body: Record<string, unknown> = {},
  options: { readonly username?: string } = {}
) => {
  const tg = world.fake.addBot({ username: options.username ?? `bot${Math.random().toString(36).slice(2, 8)}_bot` })
  const reply = await world.server.call("/api/bots/add", { body: { token: tg.token, manage_enabled: true, ...body } })
  assert.strictEqual(reply.status, 200, reply.text)
  return { tg, id: reply.json.id as number }
}

/** An operator key for these bots. */
export const operatorKey = async (world: InboxWorld, botIds: ReadonlyArray<number>): Promise<string> => {
  const created = await world.server.call("/api/auth/api-keys", { body: { name: "op", role: "operator", bot_ids: botIds } })
  assert.strictEqual(created.status, 200, created.text)
  return created.json.key
}

/** Waits until the bot's history holds a message of the chat with this text. */
export const stored = (world: InboxWorld, botId: number, chatId: number, text: string) =>
  eventually(async () => {
    const page = await world.server.call(`/api/messages?bot_id=${botId}&chat_id=${chatId}&limit=200`)
    return page.json?.some?.((m: any) => m.text === text) === true ? true : undefined
  })

/** Waits until the chat shows what `ready` looks for; its Chat then. */
export const chatWhen = (world: InboxWorld, botId: number, chatId: number, ready: (chat: any) => boolean) =>
  eventually(async () => {
    const reply = await world.server.call(`/api/chats/get?bot_id=${botId}&chat_id=${chatId}`)
    return reply.status === 200 && ready(reply.json) ? reply.json : undefined
  })
