import type { TagStore } from "@botrelay/core"
import { TagQueries } from "@botrelay/sql"
import { all, type Connection, first, run } from "./PostgresConnection.js"

/** The `TagStore` on Postgres. */
export const make = (c: Connection): TagStore.TagStoreService => ({
  upsertTag: (input) =>
    c.transaction("upsertTag", async (db) => {
      const updated = await all(db, TagQueries.updateTag(db, input))
      return TagQueries.toTag(updated.length > 0 ? updated[0]! : (await all(db, TagQueries.insertTag(db, input)))[0]!)
    }),
  listTags: (filter) => c.use("listTags", async (db) => (await all(db, TagQueries.listTags(db, filter))).map(TagQueries.toTag)),
  findTag: (id) => c.use("findTag", async (db) => first(await all(db, TagQueries.findTag(db, id)), TagQueries.toTag)),
  deleteTag: (id) => c.use("deleteTag", async (db) => (await run(db, TagQueries.deleteTag(db, id))) > 0)
})
