import { PgCluster } from "@botrelay/testing"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type BotrelayApp, createBotrelay } from "../src/index.js"

const secretKey = "6".repeat(64)
const adminKey = `brk_${"p".repeat(43)}`
let cluster: PgCluster.Cluster | undefined

if (PgCluster.available) {
  beforeAll(async () => {
    cluster = await PgCluster.start()
  })
  afterAll(() => cluster?.stop())

  describe("createBotrelay on PostgreSQL", () => {
    it("instances sharing a database see each other's changes; the admin key is registered once", async () => {
      const database = await cluster!.createDatabase()
      const apps: Array<BotrelayApp> = []
      try {
        apps.push(
          ...await Promise.all(
            [1, 2, 3].map(() =>
              createBotrelay({ database, secretKey, databasePool: 2, adminKey, telegramApi: "http://127.0.0.1:9", logLevel: "None" })
            )
          )
        )
        const keys = await apps[0]!.apiKeys.list()
        assert.deepStrictEqual(keys.map((k) => k.role), ["admin"])
        const bot = await apps[1]!.bots.add({ token: "123456:AAH-shared-token", name: "shared" })
        assert.deepStrictEqual((await apps[2]!.bots.list()).map((b) => b.name), ["shared"])
        assert.strictEqual((await apps[0]!.bots.get(bot.id)).name, "shared")
      } finally {
        await Promise.all(apps.map((app) => app.close()))
      }
    }, 60_000)

    it("without a secret key it refuses to start", async () => {
      const database = await cluster!.createDatabase()
      const error = await createBotrelay({ database, logLevel: "None" }).then(() => undefined, (e: unknown) => e)
      assert.include(String((error as Error | undefined)?.message), "is required with PostgreSQL")
    })
  })
} else {
  describe("createBotrelay on PostgreSQL", () => {
    it.skip(PgCluster.unavailableReason, () => {})
  })
}
