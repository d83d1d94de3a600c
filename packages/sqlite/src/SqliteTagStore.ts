import type { ChatTag, TagStore } from "@botrelay/core"
import { TagQueries } from "@botrelay/sql"
import { attempt, type Connection, db, first } from "./SqliteConnection.js"

/** The `TagStore` on SQLite. */
export const make = (c: Connection): TagStore.TagStoreService => {
  const upsertTag = c.transaction((input: ChatTag.TagRecordInput): ChatTag.Tag => {
    const updated = c.all(TagQueries.updateTag(db, input))
    return TagQueries.toTag(updated.length > 0 ? updated[0]! : c.all(TagQueries.insertTag(db, input))[0]!)
  })

  return {
    upsertTag: (input) => attempt("upsertTag", () => upsertTag(input)),
    listTags: (filter) => attempt("listTags", () => c.all(TagQueries.listTags(db, filter)).map(TagQueries.toTag)),
    findTag: (id) => attempt("findTag", () => first(c.all(TagQueries.findTag(db, id)), TagQueries.toTag)),
    deleteTag: (id) => attempt("deleteTag", () => c.run(TagQueries.deleteTag(db, id)) > 0)
  }
}
