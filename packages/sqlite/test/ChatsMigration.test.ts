import { ChatStore, MessageStore, StatsStore } from "@botrelay/core"
import { SecretKey, SqliteStores } from "@botrelay/sqlite"
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Context, Effect, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { migrateBefore } from "./Open.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "botrelay-chats-migration-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

describe("0012_chats_people", () => {
  it.scoped("builds chats and counts from the history already stored, read up to their last message", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const key = SecretKey.generate()
      const host = new Database(file)
      yield* migrateBefore(host, key, "0012_chats_people")
      host.prepare(
        "INSERT INTO botrelay_bots (token, secret_token, source, manage_enabled, created_at, updated_at) VALUES ('', '', 'web', 1, '', '')"
      ).run()
      const insert = host.prepare(
        "INSERT INTO botrelay_messages (bot_id, chat_id, id, date, direction, deleted) VALUES (1, ?, ?, ?, ?, ?)"
      )
      insert.run(10, 1, 7200, "in", 0)
      insert.run(10, 2, 7300, "out", 0)
      insert.run(10, 3, 7400, "in", 1)
      insert.run(-1_001_000_000_000, 1, 90_000, "in", 0)
      host.close()

      const stores = yield* SqliteStores.make({ filename: file, secretKey: key })
      const chats = Context.get(stores, ChatStore.ChatStore)
      const stats = Context.get(stores, StatsStore.StatsStore)
      const chat = Option.getOrThrow(yield* chats.findChat(1, 10))
      assert.deepStrictEqual(
        [chat.type, chat.message_count, chat.unread_count, chat.last_message?.id, chat.last_message_at],
        ["private", 2, 0, 3, 7400]
      )
      assert.strictEqual(Option.getOrThrow(yield* chats.findChat(1, -1_001_000_000_000)).type, "supergroup")
      assert.deepStrictEqual(yield* stats.hourCounts([1], 0, 100), [
        { hour: 2, in: 2, out: 1 },
        { hour: 25, in: 1, out: 0 }
      ])
      assert.deepStrictEqual(yield* stats.topChats([1], 0, 1, 10), [
        { bot_id: 1, chat_id: 10, title: "", messages: 3 },
        { bot_id: 1, chat_id: -1_001_000_000_000, title: "", messages: 1 }
      ])
      yield* chats.markRead(1, 10, 7000)
      assert.strictEqual(Option.getOrThrow(yield* chats.findChat(1, 10)).unread_count, 1)

      const text = { user_id: 10, username: "", first_name: "", last_name: "", text: "", edit_date: 0 }
      yield* Context.get(stores, MessageStore.MessageStore).saveMessages([
        { ...text, bot_id: 1, chat_id: 10, id: 4, date: 7500, direction: "in" },
        { ...text, bot_id: 1, chat_id: 10, id: 2, date: 7300, direction: "out" }
      ])
      const counted = Option.getOrThrow(yield* chats.findChat(1, 10))
      assert.deepStrictEqual(
        [counted.message_count, counted.unread_count, counted.last_message?.id],
        [3, 2, 4],
        "after 0017 the store counts new messages, once each"
      )
    }))
})
