import { type Broadcast, Errors } from "@botrelay/core"
import { Duration, Effect, Queue, Schedule } from "effect"
import { sql } from "kysely"
import type pg from "pg"
import type { Connection } from "./PostgresConnection.js"

/** The channel instances NOTIFY and LISTEN on. */
export const channel = "botrelay_events"

/** NOTIFY takes payloads shorter than 8,000 bytes. */
const maxBytes = 7_900

/**
 * Messages between instances by LISTEN/NOTIFY: `say` notifies through the pool; each `listen` holds a
 * connection of its own, and when it is lost connects again (backing off from 100 ms to 5 s) and says so
 * with `Reconnected`.
 */
export const make = (c: Connection): Broadcast.BroadcastService => ({
  shared: true,
  maxBytes,
  say: (text) => c.use("notify", async (db) => void (await sql`SELECT pg_notify(${channel}, ${text})`.execute(db))),
  listen: Effect.gen(function*() {
    const heard = yield* Queue.unbounded<Broadcast.Heard>()
    const session = Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = await c.connect()
          const closed = new Promise<void>((resolve) => {
            client.on("error", () => resolve())
            client.on("end", () => resolve())
          })
          client.on("notification", (n: pg.Notification) => {
            if (n.channel === channel && n.payload !== undefined) Queue.unsafeOffer(heard, { _tag: "Message", text: n.payload })
          })
          await client.query(`LISTEN ${channel}`)
          return { client, closed }
        },
        catch: (cause) => new Errors.StorageError({ operation: "listen", cause })
      }),
      ({ client }) => Effect.promise(() => client.end().catch(() => undefined))
    )
    let cutOff = false
    yield* Effect.scoped(Effect.gen(function*() {
      const { closed } = yield* session
      if (cutOff) Queue.unsafeOffer(heard, { _tag: "Reconnected" })
      cutOff = false
      yield* Effect.promise(() => closed)
      return yield* new Errors.StorageError({ operation: "listen", cause: "the connection was lost" })
    })).pipe(
      Effect.tapError((e) =>
        Effect.zipRight(
          Effect.sync(() => void (cutOff = true)),
          Effect.logWarning("lost the link to the other instances; connecting again", e.cause)
        )
      ),
      Effect.retry(Schedule.exponential(Duration.millis(100)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))),
      Effect.forkScoped
    )
    return heard
  })
})
