import type { Duration } from "effect"
import { millis, type State } from "./State.js"
import type { CallRecord, SentMessage } from "./Types.js"

/** Logs a sent message and tells the listeners. */
export const recordSent = (state: State, sent: SentMessage) => {
  state.sentLog.push(sent)
  for (const listener of [...state.sentListeners]) listener(sent)
}

/** Logs an answered call and tells the listeners. */
export const recordCall = (state: State, call: CallRecord) => {
  state.callLog.push(call)
  for (const listener of [...state.callListeners]) listener(call)
}

/** Waits for the first item, past or future, matching `predicate`; rejects on timeout or when the fake closes. */
export const waitFor = <T>(
  state: State,
  past: ReadonlyArray<T>,
  listeners: Set<(item: T) => void>,
  predicate: (item: T) => boolean,
  timeout: Duration.DurationInput,
  what: string,
  timedOut: (ms: number) => string
): Promise<T> => {
  const found = past.find(predicate)
  if (found !== undefined) return Promise.resolve(found)
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer)
      listeners.delete(listener)
      state.closers.delete(onClose)
    }
    const listener = (item: T) => {
      if (!predicate(item)) return
      done()
      resolve(item)
    }
    const onClose = () => {
      done()
      reject(new Error(`FakeTelegram closed while waiting for ${what}`))
    }
    const ms = millis(timeout)
    const timer = setTimeout(() => {
      done()
      reject(new Error(timedOut(ms)))
    }, ms)
    listeners.add(listener)
    state.closers.add(onClose)
  })
}
