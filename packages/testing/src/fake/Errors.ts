import type { Failure } from "./Answer.js"
import type { Bot, State } from "./State.js"
import type { InjectedError } from "./Types.js"

/** An injected error and the calls it matches: a method (lower case) of one bot or of any. */
export interface Injected {
  readonly method: string
  readonly botId: number | undefined
  readonly error: InjectedError
}

/** The next matching call fails with `error`, once. */
export const failNext = (state: State, method: string, error: InjectedError, botId: number | undefined) => {
  state.oneShot.push({ method: method.toLowerCase(), botId, error })
}

/** Every matching call fails with `error` until `clearFailures`. */
export const failAlways = (state: State, method: string, error: InjectedError, botId: number | undefined) => {
  state.always.push({ method: method.toLowerCase(), botId, error })
}

/** The next matching call is carried out but its connection is dropped before the answer, once. */
export const dropNext = (state: State, method: string, botId: number | undefined) => {
  state.drops.push({ method: method.toLowerCase(), botId })
}

/** Whether the answer of this call of `method` by `bot` is to be dropped (a `dropNext` is used up). */
export const takeDrop = (state: State, method: string, bot: Bot): boolean => {
  const key = method.toLowerCase()
  const index = state.drops.findIndex((entry) => entry.method === key && (entry.botId === undefined || entry.botId === bot.id))
  if (index < 0) return false
  state.drops.splice(index, 1)
  return true
}

/** Drops every injected failure, one-shot or not, and every pending `dropNext`. */
export const clearFailures = (state: State) => {
  state.oneShot.length = 0
  state.always.length = 0
  state.drops.length = 0
}

/** The failure a call of `method` by `bot` answers with, one-shot ones first (and used up); undefined for none. */
export const takeFailure = (state: State, method: string, bot: Bot): Failure | undefined => {
  const key = method.toLowerCase()
  const matches = (entry: Injected) => entry.method === key && (entry.botId === undefined || entry.botId === bot.id)
  const index = state.oneShot.findIndex(matches)
  const injected = index >= 0 ? state.oneShot.splice(index, 1)[0]?.error : state.always.find(matches)?.error
  if (injected === undefined) return undefined
  const parameters = {
    ...(injected.retry_after === undefined ? {} : { retry_after: injected.retry_after }),
    ...(injected.migrate_to_chat_id === undefined ? {} : { migrate_to_chat_id: injected.migrate_to_chat_id })
  }
  return {
    error_code: injected.error_code,
    description: injected.description,
    ...(Object.keys(parameters).length === 0 ? {} : { parameters })
  }
}
