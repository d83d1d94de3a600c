import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"

/** Who made a request, as request logs name it: `key:3`, `account:5` or `anonymous`. */
export interface Slot {
  actor: string
}

const slotKey = Symbol.for("@botrelay/http/RequestActor")

/** Attaches a fresh slot to a request's source object (the host's request), where `set` writes and the host reads. */
export const attach = (source: object, slot: Slot = { actor: "anonymous" }): Slot => {
  ;(source as { [slotKey]?: Slot })[slotKey] = slot
  return slot
}

/** Records who made the request, when the host attached a slot to it (see `attach`). */
export const set = (request: HttpServerRequest.HttpServerRequest, actor: string): void => {
  const source = request.source
  if (typeof source !== "object" || source === null) return
  const slot = (source as { [slotKey]?: Slot })[slotKey]
  if (slot !== undefined) slot.actor = actor
}
