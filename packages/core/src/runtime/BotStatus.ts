import { TelegramClient } from "@botrelay/telegram"
import { Effect } from "effect"
import type { StoredBot } from "../domain/Bot.js"
import { BotStore } from "../stores/BotStore.js"
import { Event, Events } from "./Events.js"

/**
 * What an ingress (poller or webhook) writes back about its bot: `last_error` (only when it
 * changes, logged when set, told on the bus as a `BotStatusChanged` that keeps `running` as it is)
 * and `username` from getMe. Failures to write are logged, never fatal.
 */
export const make = (bot: StoredBot, failure: string) =>
  Effect.gen(function*() {
    const botStore = yield* BotStore
    const telegram = yield* TelegramClient.TelegramClient
    const events = yield* Events
    let lastError = bot.last_error
    let username = bot.username

    const write = (patch: { readonly last_error?: string; readonly username?: string }) =>
      botStore.updateBot(bot.id, patch).pipe(Effect.asVoid, Effect.catchAll((e) => Effect.logWarning(e.message)))

    const setError = (message: string) =>
      message === lastError ? Effect.void : Effect.suspend(() => {
        lastError = message
        return Effect.zipRight(
          write({ last_error: message }).pipe(
            Effect.zipRight(Effect.suspend(() =>
              events.publish(Event.BotStatusChanged({ bot_id: bot.id, running: events.isRunning(bot.id) }))
            ))
          ),
          message === "" ? Effect.void : Effect.logWarning(failure).pipe(
            Effect.annotateLogs({ bot_id: bot.id, error: message })
          )
        )
      })

    const identify = Effect.suspend(() =>
      telegram.getMe(bot.token).pipe(
        Effect.flatMap((me) =>
          me.username !== undefined && me.username !== username
            ? Effect.suspend(() => {
              username = me.username!
              return write({ username })
            })
            : Effect.void
        ),
        Effect.ignore
      )
    )

    return { setError, identify } as const
  })
