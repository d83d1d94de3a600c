import { PostgresStores } from "@botrelay/postgres"
import { SecretKey } from "@botrelay/sql"
import { PgCluster } from "@botrelay/testing"
import * as StoreSuite from "@botrelay/testing/StoreSuite"
import { describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll } from "vitest"

const secretKey = SecretKey.generate()

let cluster: PgCluster.Cluster | undefined
let template = ""

/** Every store on a fresh database: a copy of a migrated template, dropped when the layer is released. */
const freshDatabase = Layer.unwrapScoped(
  Effect.map(
    Effect.suspend(() => PgCluster.database(cluster!, { template })),
    (url) => PostgresStores.layer({ url, secretKey, pool: 4 })
  )
)

if (PgCluster.available) {
  beforeAll(async () => {
    cluster = await PgCluster.start()
    const url = await cluster.createDatabase()
    await Effect.runPromise(Effect.scoped(PostgresStores.make({ url, secretKey })))
    template = PgCluster.databaseOf(url)
  })
  afterAll(() => cluster?.stop())
  StoreSuite.suite("postgres", freshDatabase)
} else {
  describe("postgres storage", () => {
    it.skip(PgCluster.unavailableReason, () => {})
  })
}
