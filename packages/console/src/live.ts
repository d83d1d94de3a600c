import { useEffect, useRef, useSyncExternalStore } from "react"
import { href, type Schemas } from "./api/client"

type Data = Schemas["LiveEvent"]
type With<K extends keyof Data> = Data & Required<Pick<Data, K>>

/**
 * One event of `GET /api/events` (docs/http-api.md, "Live events"): the contract's `LiveEvent`, told
 * apart by `type` (what each type always carries made required), or a `reset`.
 */
export type LiveEvent =
  | With<"message"> & { readonly type: "message" | "message_edited" | "message_deleted" }
  | Data & { readonly type: "chat" }
  | With<"bot"> & { readonly type: "bot" }
  | With<"delivery"> & { readonly type: "delivery" }
  /** The stream could not replay what was missed: reload what is shown, then read on. */
  | { readonly type: "reset" }

/** Whether the stream is open (`live`), being opened again (`connecting`), or given up for now (`offline`). */
export type LiveStatus = "connecting" | "live" | "offline"

type Listener = (event: LiveEvent) => void

const names = ["message", "message_edited", "message_deleted", "chat", "bot", "delivery", "reset"] as const

/**
 * The one `EventSource` of the page, shared by every subscriber, on the session cookie. The browser
 * reconnects by itself and sends `Last-Event-ID`, so the server replays what was missed; when the
 * server refused the stream (an error answer closes an EventSource for good) it is opened again after
 * a pause, from the last id seen. An open without any id to replay from (the first, or one before any
 * event came) is told to subscribers as a `reset`, since events may have been missed before it: what
 * a page loaded before the stream opened may already be behind.
 */
class LiveConnection {
  private readonly listeners = new Set<Listener>()
  private readonly statusListeners = new Set<() => void>()
  private source: EventSource | undefined
  private lastId: string | undefined
  private retry: ReturnType<typeof setTimeout> | undefined
  private closing: ReturnType<typeof setTimeout> | undefined
  private failures = 0
  status: LiveStatus = "connecting"

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener)
    clearTimeout(this.closing)
    if (this.source === undefined && this.retry === undefined) this.open()
    return () => {
      this.listeners.delete(listener)
      // a short grace, so a page that re-subscribes at once (a re-render, StrictMode) keeps the stream
      if (this.listeners.size === 0) this.closing = setTimeout(() => this.close(), 1000)
    }
  }

  subscribeStatus(listener: () => void): () => void {
    this.statusListeners.add(listener)
    return () => this.statusListeners.delete(listener)
  }

  private setStatus(status: LiveStatus) {
    if (this.status === status) return
    this.status = status
    for (const listener of this.statusListeners) listener()
  }

  private emit(event: LiveEvent) {
    for (const listener of [...this.listeners]) {
      try {
        listener(event)
      } catch (e) {
        // one subscriber's failure must not stop the others
        setTimeout(() => {
          throw e
        })
      }
    }
  }

  private open() {
    this.retry = undefined
    this.setStatus("connecting")
    const url = href("api/events") + (this.lastId === undefined ? "" : `?last_event_id=${encodeURIComponent(this.lastId)}`)
    const source = new EventSource(url)
    this.source = source
    source.onopen = () => {
      this.failures = 0
      this.setStatus("live")
      // nothing to replay from: what is shown may have missed events since it was loaded
      if (this.lastId === undefined) this.emit({ type: "reset" })
    }
    const onEvent = (e: MessageEvent<string>) => {
      if (e.lastEventId !== "") this.lastId = e.lastEventId
      let event: LiveEvent
      try {
        event = JSON.parse(e.data) as LiveEvent
      } catch {
        return
      }
      this.emit(event)
    }
    for (const name of names) source.addEventListener(name, onEvent)
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        // refused (401, 5xx...) or unreachable: the browser gives up, we try again later
        source.close()
        this.source = undefined
        this.failures += 1
        this.setStatus("offline")
        const delay = Math.min(30_000, 1000 * 2 ** Math.min(this.failures - 1, 5))
        this.retry = setTimeout(() => this.open(), delay)
      } else {
        this.setStatus("connecting")
      }
    }
  }

  private close() {
    clearTimeout(this.retry)
    this.retry = undefined
    this.source?.close()
    this.source = undefined
    this.setStatus("connecting")
  }
}

const connection = new LiveConnection()

/**
 * Calls `onEvent` with every live event of the bots the session may see, while the component is
 * mounted. Every page shares one stream. A `reset` means "reload what you show": events may have been
 * missed (the server's log no longer reached back, or the stream opened without anything to replay).
 */
export const useLiveEvents = (onEvent: (event: LiveEvent) => void) => {
  const handler = useRef(onEvent)
  useEffect(() => {
    handler.current = onEvent
  })
  useEffect(() => connection.subscribe((event) => handler.current(event)), [])
}

/** The live stream's status, for a page that tells the reader when updates are paused. */
export const useLiveStatus = (): LiveStatus =>
  useSyncExternalStore((listener) => connection.subscribeStatus(listener), () => connection.status)
