import { Context, Layer } from "effect"

/** When each bot's getUpdates last returned on this instance: how the status report tells a poller's lag. */
export interface IngressPollsService {
  /** Notes that a getUpdates of the bot returned at `at` (Unix milliseconds). */
  readonly returned: (botId: number, at: number) => void
  /** When a getUpdates of the bot last returned here, if ever. */
  readonly last: (botId: number) => number | undefined
}

/** The poll times of this instance's pollers. */
export class IngressPolls extends Context.Tag("@botrelay/core/IngressPolls")<IngressPolls, IngressPollsService>() {}

/** A fresh record, kept in memory. */
export const make = (): IngressPollsService => {
  const times = new Map<number, number>()
  return {
    returned: (botId, at) => void times.set(botId, at),
    last: (botId) => times.get(botId)
  }
}

/** The record as a layer. */
export const layer: Layer.Layer<IngressPolls> = Layer.sync(IngressPolls, make)
