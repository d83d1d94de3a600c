import { Bots, Events, FloodControl, Inbox, LlmRouter, LongPoll, MemoryStorage, Routes, type Storage } from "@botrelay/core"
import { HttpExchange, type TelegramClient } from "@botrelay/telegram"
import { Effect, Layer } from "effect"

// The layers the runtime tests build on. Storage comes from here only, so changing the driver is this file alone.

/** Empty storage for one test. */
export const storage: Layer.Layer<Storage.Storage> = MemoryStorage.layer

/** Empty storage and an event bus for one test. */
export const stores: Layer.Layer<Storage.Storage | Events.Events> = Layer.merge(storage, Events.layer)

/** An LLM router that never chooses a route. */
export const noLlm: Layer.Layer<LlmRouter.LlmRouter> = Layer.succeed(LlmRouter.LlmRouter, {
  choose: () => Effect.succeed([])
})

/** A backend that answers 200 to everything and records the update ids it received. */
export const backend = () => {
  const received: Array<number> = []
  const layer = Layer.succeed(
    HttpExchange.HttpExchange,
    HttpExchange.HttpExchange.of({
      exchange: (request) =>
        Effect.sync(() => {
          received.push((JSON.parse(String(request.body)) as { update_id: number }).update_id)
          return { status: 200, headers: {}, body: new Uint8Array() }
        })
    })
  )
  return { received, layer }
}

/** What `Supervisor.run` and the management services need, on fresh storage and the given Telegram and backend. */
export const runtime = (
  telegram: Layer.Layer<TelegramClient.TelegramClient>,
  http: Layer.Layer<HttpExchange.HttpExchange> = backend().layer,
  longPoll: LongPoll.Options = LongPoll.defaults
) =>
  Layer.mergeAll(Bots.layer, Routes.layer, LongPoll.layer(longPoll), Inbox.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(storage, Events.layer, FloodControl.layer(), noLlm, telegram, http))
  )

/** Lets forked fibers run until `done` holds, at most 1000 turns; nothing here waits on the clock. */
export const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000 && !done(); i++) yield* Effect.yieldNow()
  })

/** Lets subscribers of the event bus take what was just published. */
export const followed = Effect.repeatN(Effect.yieldNow(), 10)
