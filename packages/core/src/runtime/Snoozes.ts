import { Duration, Effect } from "effect"
import { nowSeconds } from "../internal/Time.js"
import { ChatStore } from "../stores/ChatStore.js"
import { Event, Events } from "./Events.js"

/** How often snoozed chats are looked at. */
export interface Options {
  readonly interval: Duration.DurationInput
}

/** Defaults: every 15 seconds, so a snooze ends at most that late. */
export const defaults: Options = { interval: Duration.seconds(15) }

/** Chats one write reopens. */
const chunk = 500

/**
 * One round: reopens every snoozed chat whose `snoozed_until` has come (the store audits each as
 * `chats.reopen` by `system`) and publishes `ChatChanged` for each; the number reopened. Instances
 * sharing a store may run it at once: each chat is reopened by one of them.
 */
export const wake = Effect.gen(function*() {
  const store = yield* ChatStore
  const events = yield* Events
  const now = yield* nowSeconds
  let woken = 0
  while (true) {
    const round = yield* store.wakeSnoozed(now, chunk)
    woken += round.length
    for (const chat of round) yield* events.publish(Event.ChatChanged(chat))
    if (round.length < chunk) break
    yield* Effect.yieldNow()
  }
  if (woken > 0) yield* Effect.logDebug("snoozed chats reopened").pipe(Effect.annotateLogs({ chats: woken }))
  return woken
})

/** Wakes snoozed chats now and then every `interval`; a failed round is logged and retried next time. */
export const run = (options: Options = defaults) =>
  wake.pipe(
    Effect.catchAll((e) => Effect.logWarning("could not reopen snoozed chats", e.cause)),
    Effect.zipRight(Effect.sleep(options.interval)),
    Effect.forever
  )
