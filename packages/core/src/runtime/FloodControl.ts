import type { TelegramError } from "@botrelay/telegram"
import { Clock, Context, Duration, Effect, Layer } from "effect"

/** A rate: at most `count` sends per `per`, with up to `burst` of them back to back. */
export interface Rate {
  readonly count: number
  readonly per: Duration.DurationInput
  readonly burst: number
}

/** Telegram's limits for bots and how 429s are retried. */
export interface Options {
  readonly perBot: Rate
  readonly perPrivateChat: Rate
  readonly perGroup: Rate
  /** How many times a send answered with 429 is tried again after `retry_after`. */
  readonly retries429: number
}

/** Telegram's published limits: about 30 messages/s per bot, 1/s per chat, 20/min per group. */
export const defaults: Options = {
  perBot: { count: 30, per: Duration.seconds(1), burst: 30 },
  perPrivateChat: { count: 1, per: Duration.seconds(1), burst: 3 },
  perGroup: { count: 20, per: Duration.minutes(1), burst: 3 },
  retries429: 3
}

/** Paces a bot's sends to stay within Telegram's flood limits, and retries 429s after `retry_after`. */
export interface FloodControlService {
  /** Runs `send` when the bot may send to the chat; a 429 waits `retry_after` and tries again. */
  readonly send: <A, E extends TelegramError.TelegramError, R>(
    botId: number,
    chatId: number | string,
    send: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
}

/** Paces a bot's sends to stay within Telegram's flood limits. */
export class FloodControl extends Context.Tag("@botrelay/core/FloodControl")<FloodControl, FloodControlService>() {}

/** Groups, supergroups and channels have negative ids (or an @username); users positive ones. */
const isGroup = (chatId: number | string) => typeof chatId === "string" || chatId < 0

/** Builds the pacer: for each bot and chat, the earliest time the next send may go. */
export const make = (options: Options = defaults): Effect.Effect<FloodControlService> =>
  Effect.sync(() => {
    const next = new Map<string, number>()

    /** Reserves the earliest slot the rate allows for the key; returns how long to wait for it. */
    const reserve = (now: number, key: string, rate: Rate): number => {
      const spacing = Duration.toMillis(rate.per) / rate.count
      const slot = Math.max(now, (next.get(key) ?? 0) - spacing * (rate.burst - 1))
      next.set(key, Math.max(next.get(key) ?? 0, slot) + spacing)
      if (next.size > 50_000) {
        for (const [stale, at] of next) if (at < now) next.delete(stale)
      }
      return slot - now
    }

    const send = <A, E extends TelegramError.TelegramError, R>(
      botId: number,
      chatId: number | string,
      effect: Effect.Effect<A, E, R>,
      retriesLeft: number
    ): Effect.Effect<A, E, R> => {
      const pause = (key: string, rate: Rate) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const wait = reserve(now, key, rate)
          return wait > 0 ? Effect.sleep(Duration.millis(wait)) : Effect.void
        })
      return pause(`${botId}/${chatId}`, isGroup(chatId) ? options.perGroup : options.perPrivateChat).pipe(
        Effect.zipRight(pause(`${botId}`, options.perBot)),
        Effect.zipRight(effect),
        Effect.catchIf(
          (e) => e._tag === "TelegramApiError" && e.error_code === 429 && retriesLeft > 0,
          (e) => {
            const seconds = e._tag === "TelegramApiError" ? e.retry_after ?? 1 : 1
            return Effect.logInfo("Telegram rate limit; waiting").pipe(
              Effect.annotateLogs({ bot_id: botId, retry_after: seconds }),
              Effect.zipRight(Effect.sleep(Duration.seconds(seconds))),
              Effect.zipRight(send(botId, chatId, effect, retriesLeft - 1))
            )
          }
        )
      )
    }

    return FloodControl.of({ send: (botId, chatId, effect) => send(botId, chatId, effect, options.retries429) })
  })

/** The pacer as a layer. */
export const layer = (options: Options = defaults): Layer.Layer<FloodControl> =>
  Layer.effect(FloodControl, make(options))
