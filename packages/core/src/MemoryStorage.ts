import { Effect, Layer, Option, Redacted } from "effect"
import type { ApiKey, ApiKeyRecordInput } from "./ApiKey.js"
import type { BotPatch, StoredBot } from "./Bot.js"
import { DuplicateToken } from "./Bot.js"
import type { Delivery, DeliveryOutcome } from "./Delivery.js"
import type { BufferEntry, InboxUpdate } from "./Inbox.js"
import type { BufferState } from "./LongPoll.js"
import { passes } from "./LongPoll.js"
import type { Message } from "./Message.js"
import type { Route } from "./Route.js"
import type { RouteMapping, RouteSend, SendOutcome } from "./RouteSend.js"
import type { StorageService } from "./Storage.js"
import { Storage } from "./Storage.js"
import type { Tag } from "./Tag.js"

type BotRow = Omit<StoredBot, "token" | "secret_token"> & { readonly token: string; readonly secret_token: string }

type ApiKeyRow = ApiKey & { readonly hash: string }

type InboxRow = InboxUpdate & { readonly processed: boolean }

const patchableFields = [
  "name",
  "source",
  "manage_enabled",
  "proxy_enabled",
  "backend_url",
  "backend_url_origin",
  "long_poll_enabled",
  "description",
  "webhook_mode",
  "disabled",
  "username",
  "last_error",
  "last_update_at",
  "updated_at"
] as const satisfies ReadonlyArray<keyof BotPatch | "updated_at">

const toBot = (row: BotRow): StoredBot => ({
  ...row,
  token: Redacted.make(row.token),
  secret_token: Redacted.make(row.secret_token)
})

const toApiKey = ({ hash: _hash, ...key }: ApiKeyRow): ApiKey => ({ ...key, bot_ids: [...key.bot_ids] })

const copyMessage = (m: Message): Message => {
  const message: { -readonly [K in keyof Message]: Message[K] } = {
    id: m.id,
    chat_id: m.chat_id,
    bot_id: m.bot_id,
    user_id: m.user_id,
    username: m.username,
    first_name: m.first_name,
    last_name: m.last_name,
    text: m.text,
    date: m.date,
    direction: m.direction,
    edit_date: m.edit_date,
    deleted: m.deleted
  }
  if (m.media_type !== undefined) message.media_type = m.media_type
  if (m.file_id !== undefined) message.file_id = m.file_id
  if (m.reply_to_message_id !== undefined) message.reply_to_message_id = m.reply_to_message_id
  return message
}

const copyRoute = (r: Route): Route => ({
  id: r.id,
  source_bot_id: r.source_bot_id,
  target_bot_id: r.target_bot_id,
  condition_type: r.condition_type,
  condition_value: r.condition_value,
  action: r.action,
  target_chat_id: r.target_chat_id,
  enabled: r.enabled,
  description: r.description,
  created_at: r.created_at
})

const copyUpdate = (u: InboxUpdate): InboxUpdate => ({
  bot_id: u.bot_id,
  update_id: u.update_id,
  payload: u.payload,
  received_at: u.received_at
})

const copyDelivery = (d: Delivery): Delivery => ({
  id: d.id,
  bot_id: d.bot_id,
  update_id: d.update_id,
  url: d.url,
  payload: d.payload,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.next_attempt_at,
  last_error: d.last_error,
  created_at: d.created_at,
  updated_at: d.updated_at
})

/** Outbox entries newest first, of one bot and one status when the filter says so, at most `limit`. */
const newestFirst = <A extends { readonly bot_id: number; readonly status: string }>(
  byIdOrder: ReadonlyArray<A>,
  filter: { readonly bot_id?: number; readonly status?: string; readonly limit: number }
): Array<A> =>
  [...byIdOrder]
    .reverse()
    .filter((a) =>
      (filter.bot_id === undefined || a.bot_id === filter.bot_id) &&
      (filter.status === undefined || a.status === filter.status)
    )
    .slice(0, filter.limit)

/** The bot's first `limit` pending entries, in insertion order, as `copy` gives them. */
const firstPending = <V extends { readonly bot_id: number; readonly status: string }, A>(
  map: Map<number, V>,
  botId: number,
  limit: number,
  copy: (value: V) => A
): Array<A> => {
  const found: Array<A> = []
  for (const value of map.values()) {
    if (found.length >= limit) break
    if (value.bot_id === botId && value.status === "pending") found.push(copy(value))
  }
  return found
}

/** Deletes the first `limit` entries (in insertion order) that `done` accepts; returns how many went. */
const prune = <V>(map: Map<number, V>, limit: number, done: (value: V) => boolean): number => {
  let removed = 0
  for (const [id, value] of map) {
    if (removed >= limit) break
    if (done(value)) {
      map.delete(id)
      removed++
    }
  }
  return removed
}

/** A route send as kept here: its payload stays in the inbox. */
type StoredSend = Omit<RouteSend, "payload">

const copySend = (r: StoredSend, payload: string): RouteSend => ({
  id: r.id,
  bot_id: r.bot_id,
  kind: r.kind,
  route_id: r.route_id,
  source_bot_id: r.source_bot_id,
  update_id: r.update_id,
  from_chat_id: r.from_chat_id,
  message_id: r.message_id,
  chat_id: r.chat_id,
  reply_to_message_id: r.reply_to_message_id,
  hop: r.hop,
  payload,
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at,
  last_error: r.last_error,
  created_at: r.created_at,
  updated_at: r.updated_at
})

const copyMapping = (m: RouteMapping): RouteMapping => ({
  id: m.id,
  route_id: m.route_id,
  source_bot_id: m.source_bot_id,
  source_chat_id: m.source_chat_id,
  source_message_id: m.source_message_id,
  target_bot_id: m.target_bot_id,
  target_chat_id: m.target_chat_id,
  target_message_id: m.target_message_id,
  hop: m.hop,
  reversible: m.reversible,
  created_at: m.created_at
})

const copyTag = (t: Tag): Tag => ({
  id: t.id,
  bot_id: t.bot_id,
  chat_id: t.chat_id,
  user_id: t.user_id,
  username: t.username,
  tag: t.tag,
  color: t.color,
  created_at: t.created_at
})

const normalizeBotIds = (ids: ReadonlyArray<number>): Array<number> =>
  Array.from(new Set(ids)).sort((a, b) => a - b)

const messageKey = (botId: number, chatId: number, id: number) => `${botId}:${chatId}:${id}`

const compareMessages = (a: Message, b: Message) => b.date - a.date || b.id - a.id

const byId = <A extends { readonly id: number }>(map: Map<number, A>): Array<A> =>
  Array.from(map.values()).sort((a, b) => a.id - b.id)

/** A fresh, empty in-memory storage: for tests, examples and ephemeral instances. */
export const make: Effect.Effect<StorageService> = Effect.sync(() => {
  const bots = new Map<number, BotRow>()
  const routes = new Map<number, Route>()
  const messages = new Map<string, Message>()
  const tags = new Map<number, Tag>()
  const apiKeys = new Map<number, ApiKeyRow>()
  const inboxes = new Map<number, Map<number, InboxRow>>()
  const offsets = new Map<number, number>()
  const webhookSecrets = new Map<number, string>()
  const buffers = new Map<number, Map<number, BufferEntry>>()
  const bufferStates = new Map<number, BufferState>()
  const settings = new Map<string, string>()
  /** In id order: ids only grow and an entry is never re-inserted, which `nextDeliveries` relies on. */
  const deliveries = new Map<number, Delivery>()
  /** In id order, like `deliveries`. */
  const sends = new Map<number, StoredSend>()
  const readSend = (r: StoredSend) => copySend(r, inboxes.get(r.source_bot_id)?.get(r.update_id)?.payload ?? "")
  /** In id order, like `deliveries`. */
  const mappings = new Map<number, RouteMapping>()
  const next = { bot: 1, route: 1, tag: 1, apiKey: 1, delivery: 1, send: 1, mapping: 1 }

  const recordAttempt = (id: number, outcome: DeliveryOutcome) => {
    const current = deliveries.get(id)
    if (current === undefined) return
    const attempts = current.attempts + 1
    switch (outcome.status) {
      case "delivered":
        return void deliveries.set(id, { ...current, status: "delivered", updated_at: outcome.at })
      case "pending":
        return void deliveries.set(id, {
          ...current,
          status: "pending",
          attempts,
          next_attempt_at: outcome.next_attempt_at,
          last_error: outcome.last_error,
          updated_at: outcome.at
        })
      case "dead":
        return void deliveries.set(id, {
          ...current,
          status: "dead",
          attempts,
          last_error: outcome.last_error,
          updated_at: outcome.at
        })
    }
  }

  /** Records an attempt at a send; false when no send has the id. */
  const recordSendOutcome = (id: number, outcome: SendOutcome): boolean => {
    const current = sends.get(id)
    if (current === undefined) return false
    const attempts = current.attempts + 1
    switch (outcome.status) {
      case "sent":
        sends.set(id, { ...current, status: "sent", attempts, last_error: "", updated_at: outcome.at })
        break
      case "pending":
        sends.set(id, {
          ...current,
          status: "pending",
          attempts,
          next_attempt_at: outcome.next_attempt_at,
          last_error: outcome.last_error,
          updated_at: outcome.at
        })
        break
      case "dead":
        sends.set(id, { ...current, status: "dead", attempts, last_error: outcome.last_error, updated_at: outcome.at })
        break
    }
    return true
  }

  /** The newest mapping `matches` accepts. */
  const newestMapping = (matches: (m: RouteMapping) => boolean): Option.Option<RouteMapping> => {
    let found: RouteMapping | undefined
    for (const mapping of mappings.values()) if (matches(mapping)) found = mapping
    return Option.map(Option.fromNullable(found), copyMapping)
  }

  /** The bot's buffered update ids, ascending. */
  const bufferedIds = (botId: number): Array<number> =>
    Array.from(buffers.get(botId)?.keys() ?? []).sort((a, b) => a - b)

  /** Forgets the buffered updates `pick` chooses from the ascending ids; returns how many. */
  const forgetBuffered = (botId: number, pick: (ids: ReadonlyArray<number>) => ReadonlyArray<number>): number => {
    const buffer = buffers.get(botId)
    if (buffer === undefined) return 0
    const forgotten = pick(bufferedIds(botId))
    for (const id of forgotten) buffer.delete(id)
    return forgotten.length
  }

  const stateOf = (botId: number): BufferState =>
    bufferStates.get(botId) ?? { allowed_updates: [], trimmed: 0, last_trimmed_at: "" }

  const botWithToken = (token: string): BotRow | undefined => {
    for (const bot of bots.values()) if (bot.token === token) return bot
    return undefined
  }

  const service: StorageService = {
    insertBot: (input) =>
      Effect.suspend(() => {
        const token = Redacted.value(input.token)
        const existing = botWithToken(token)
        if (existing !== undefined) return Effect.fail(new DuplicateToken({ existing_bot_id: existing.id }))
        const row: BotRow = {
          id: next.bot++,
          token,
          name: input.name,
          source: input.source,
          manage_enabled: input.manage_enabled,
          proxy_enabled: input.proxy_enabled,
          backend_url: input.backend_url,
          backend_url_origin: input.backend_url_origin ?? "api",
          secret_token: Redacted.value(input.secret_token),
          long_poll_enabled: input.long_poll_enabled,
          description: input.description,
          webhook_mode: false,
          disabled: false,
          username: "",
          last_error: "",
          last_update_at: "",
          created_at: input.created_at,
          updated_at: input.created_at
        }
        bots.set(row.id, row)
        return Effect.succeed(toBot(row))
      }),

    updateBot: (id, patch: BotPatch & { readonly updated_at?: string }) =>
      Effect.suspend(() => {
        const current = bots.get(id)
        if (current === undefined) return Effect.succeed(Option.none())
        const updated: { -readonly [K in keyof BotRow]: BotRow[K] } = { ...current }
        for (const key of patchableFields) {
          const value = patch[key]
          if (value !== undefined) Object.assign(updated, { [key]: value })
        }
        if (patch.secret_token !== undefined) updated.secret_token = Redacted.value(patch.secret_token)
        if (patch.token !== undefined) {
          const token = Redacted.value(patch.token)
          const existing = botWithToken(token)
          if (existing !== undefined && existing.id !== id) {
            return Effect.fail(new DuplicateToken({ existing_bot_id: existing.id }))
          }
          updated.token = token
        }
        if (updated.token !== current.token) offsets.delete(id)
        bots.set(id, updated)
        return Effect.succeed(Option.some(toBot(updated)))
      }),

    findBot: (id) => Effect.sync(() => Option.fromNullable(bots.get(id)).pipe(Option.map(toBot))),

    findBotByToken: (token) => Effect.sync(() => Option.fromNullable(botWithToken(token)).pipe(Option.map(toBot))),

    listBots: Effect.sync(() => byId(bots).map(toBot)),

    deleteBot: (id) =>
      Effect.sync(() => {
        if (!bots.delete(id)) return false
        for (const route of routes.values()) {
          if (route.source_bot_id === id || route.target_bot_id === id) routes.delete(route.id)
        }
        for (const [key, message] of messages) if (message.bot_id === id) messages.delete(key)
        for (const tag of tags.values()) if (tag.bot_id === id) tags.delete(tag.id)
        inboxes.delete(id)
        offsets.delete(id)
        webhookSecrets.delete(id)
        buffers.delete(id)
        bufferStates.delete(id)
        for (const delivery of deliveries.values()) if (delivery.bot_id === id) deliveries.delete(delivery.id)
        for (const send of sends.values()) if (send.bot_id === id) sends.delete(send.id)
        for (const mapping of mappings.values()) {
          if (mapping.source_bot_id === id || mapping.target_bot_id === id) mappings.delete(mapping.id)
        }
        for (const key of apiKeys.values()) {
          if (key.bot_ids.includes(id)) apiKeys.set(key.id, { ...key, bot_ids: key.bot_ids.filter((b) => b !== id) })
        }
        return true
      }),

    insertRoute: (input) =>
      Effect.sync(() => {
        const route = copyRoute({ ...input, id: next.route++ })
        routes.set(route.id, route)
        return copyRoute(route)
      }),

    replaceRoute: (id, input) =>
      Effect.sync(() => {
        const current = routes.get(id)
        if (current === undefined) return Option.none()
        const route = copyRoute({ ...input, id, created_at: current.created_at })
        routes.set(id, route)
        return Option.some(copyRoute(route))
      }),

    findRoute: (id) => Effect.sync(() => Option.fromNullable(routes.get(id)).pipe(Option.map(copyRoute))),

    listRoutes: (filter) =>
      Effect.sync(() => {
        const botId = filter.bot_id
        return byId(routes)
          .filter((r) => botId === undefined || r.source_bot_id === botId || r.target_bot_id === botId)
          .map(copyRoute)
      }),

    deleteRoute: (id) => Effect.sync(() => routes.delete(id)),

    saveMessage: (message) =>
      Effect.sync(() => {
        messages.set(messageKey(message.bot_id, message.chat_id, message.id), copyMessage(message))
      }),

    saveMessages: (saved) =>
      Effect.sync(() => {
        for (const message of saved) {
          messages.set(messageKey(message.bot_id, message.chat_id, message.id), copyMessage(message))
        }
      }),

    listMessages: (query) =>
      Effect.sync(() => {
        const found: Array<Message> = []
        for (const message of messages.values()) {
          if (message.bot_id === query.bot_id && message.chat_id === query.chat_id) found.push(message)
        }
        return found
          .sort(compareMessages)
          .slice(query.offset, query.offset + query.limit)
          .map(copyMessage)
      }),

    findMessage: (botId, chatId, id) =>
      Effect.sync(() => Option.map(Option.fromNullable(messages.get(messageKey(botId, chatId, id))), copyMessage)),

    markMessagesDeleted: (botId, chatId, ids) =>
      Effect.sync(() => {
        let marked = 0
        for (const id of new Set(ids)) {
          const key = messageKey(botId, chatId, id)
          const message = messages.get(key)
          if (message === undefined) continue
          messages.set(key, { ...message, deleted: true })
          marked++
        }
        return marked
      }),

    upsertTag: (input) =>
      Effect.sync(() => {
        let existing: Tag | undefined
        for (const tag of tags.values()) {
          if (
            tag.bot_id === input.bot_id && tag.chat_id === input.chat_id && tag.user_id === input.user_id &&
            tag.tag === input.tag
          ) existing = tag
        }
        const tag = existing === undefined
          ? copyTag({ ...input, id: next.tag++ })
          : { ...existing, username: input.username, color: input.color }
        tags.set(tag.id, tag)
        return copyTag(tag)
      }),

    listTags: (filter) =>
      Effect.sync(() =>
        byId(tags)
          .filter((t) =>
            t.chat_id === filter.chat_id && (filter.bot_id === undefined || t.bot_id === filter.bot_id) &&
            (filter.user_id === undefined || t.user_id === filter.user_id)
          )
          .map(copyTag)
      ),

    findTag: (id) => Effect.sync(() => Option.fromNullable(tags.get(id)).pipe(Option.map(copyTag))),

    deleteTag: (id) => Effect.sync(() => tags.delete(id)),

    insertApiKey: (input: ApiKeyRecordInput) =>
      Effect.sync(() => {
        const row: ApiKeyRow = {
          id: next.apiKey++,
          name: input.name,
          role: input.role,
          bot_ids: normalizeBotIds(input.bot_ids),
          prefix: input.prefix,
          created_at: input.created_at,
          last_used_at: "",
          enabled: true,
          hash: input.hash
        }
        apiKeys.set(row.id, row)
        return toApiKey(row)
      }),

    listApiKeys: Effect.sync(() => byId(apiKeys).map(toApiKey)),

    findApiKey: (id) => Effect.sync(() => Option.fromNullable(apiKeys.get(id)).pipe(Option.map(toApiKey))),

    findApiKeyByHash: (hash) =>
      Effect.sync(() => {
        for (const key of apiKeys.values()) if (key.hash === hash) return Option.some(toApiKey(key))
        return Option.none()
      }),

    setApiKeyEnabled: (id, enabled) =>
      Effect.sync(() => {
        const current = apiKeys.get(id)
        if (current === undefined) return Option.none()
        const row: ApiKeyRow = { ...current, enabled }
        apiKeys.set(id, row)
        return Option.some(toApiKey(row))
      }),

    touchApiKey: (id, at) =>
      Effect.sync(() => {
        const current = apiKeys.get(id)
        if (current !== undefined) apiKeys.set(id, { ...current, last_used_at: at })
      }),

    deleteApiKey: (id) => Effect.sync(() => apiKeys.delete(id)),

    ingressOffset: (botId) => Effect.sync(() => offsets.get(botId) ?? 0),

    commitUpdates: (botId, updates, nextOffset) =>
      Effect.sync(() => {
        let inbox = inboxes.get(botId)
        if (inbox === undefined) {
          inbox = new Map()
          inboxes.set(botId, inbox)
        }
        let added = 0
        for (const update of updates) {
          if (inbox.has(update.update_id)) continue
          inbox.set(update.update_id, {
            bot_id: botId,
            update_id: update.update_id,
            payload: update.payload,
            received_at: update.received_at,
            processed: false
          })
          added++
        }
        offsets.set(botId, Math.max(offsets.get(botId) ?? 0, nextOffset))
        return added
      }),

    webhookSecret: (botId) => Effect.sync(() => Option.fromNullable(webhookSecrets.get(botId))),

    setWebhookSecret: (botId, secret) =>
      Effect.sync(() => void (secret === undefined ? webhookSecrets.delete(botId) : webhookSecrets.set(botId, secret))),

    pendingUpdates: (botId, limit) =>
      Effect.sync(() => {
        const found: Array<InboxRow> = []
        for (const row of inboxes.get(botId)?.values() ?? []) if (!row.processed) found.push(row)
        return found.sort((a, b) => a.update_id - b.update_id).slice(0, limit).map(copyUpdate)
      }),

    completeUpdates: (completions) =>
      Effect.sync(() => {
        for (const completion of completions) {
          const inbox = inboxes.get(completion.bot_id)
          const row = inbox?.get(completion.update_id)
          if (inbox === undefined || row === undefined || row.processed) continue
          for (const message of completion.messages) {
            messages.set(messageKey(message.bot_id, message.chat_id, message.id), copyMessage(message))
          }
          for (const delivery of completion.deliveries) {
            const id = next.delivery++
            deliveries.set(id, {
              id,
              bot_id: delivery.bot_id,
              update_id: delivery.update_id,
              url: delivery.url,
              payload: delivery.payload,
              status: "pending",
              attempts: 0,
              next_attempt_at: delivery.created_at,
              last_error: "",
              created_at: delivery.created_at,
              updated_at: delivery.created_at
            })
          }
          for (const send of completion.sends ?? []) {
            const id = next.send++
            sends.set(id, {
              ...send,
              id,
              status: "pending",
              attempts: 0,
              next_attempt_at: send.created_at,
              last_error: "",
              updated_at: send.created_at
            })
          }
          if (completion.buffer !== undefined) {
            const buffer = buffers.get(completion.bot_id) ?? new Map<number, BufferEntry>()
            buffers.set(completion.bot_id, buffer)
            if (!buffer.has(completion.update_id)) buffer.set(completion.update_id, { ...completion.buffer })
          }
          inbox.set(completion.update_id, { ...row, processed: true })
        }
      }),

    backlog: (botId) =>
      Effect.sync(() => {
        let count = 0
        for (const row of inboxes.get(botId)?.values() ?? []) if (!row.processed) count++
        for (const delivery of deliveries.values()) {
          if (delivery.bot_id === botId && delivery.status === "pending") count++
        }
        return count
      }),

    botsWithWork: Effect.sync(() => {
      const found = new Set<number>()
      for (const [botId, inbox] of inboxes) {
        for (const row of inbox.values()) {
          if (!row.processed) {
            found.add(botId)
            break
          }
        }
      }
      for (const delivery of deliveries.values()) if (delivery.status === "pending") found.add(delivery.bot_id)
      for (const send of sends.values()) if (send.status === "pending") found.add(send.bot_id)
      return Array.from(found).sort((a, b) => a - b)
    }),

    pruneFinished: (before, limit) =>
      Effect.sync(() => {
        let updates = 0
        for (const inbox of inboxes.values()) {
          for (const [updateId, row] of inbox) {
            if (updates >= limit) break
            if (row.processed && row.received_at < before) {
              inbox.delete(updateId)
              updates++
            }
          }
        }
        return {
          updates,
          deliveries: prune(deliveries, limit, (d) => d.status === "delivered" && d.updated_at < before),
          sends: prune(sends, limit, (r) => r.status === "sent" && r.updated_at < before)
        }
      }),

    nextDeliveries: (botId, limit) => Effect.sync(() => firstPending(deliveries, botId, limit, copyDelivery)),

    recordAttempts: (attempts) =>
      Effect.sync(() => {
        for (const [id, outcome] of attempts) recordAttempt(id, outcome)
      }),

    listDeliveries: (filter) =>
      Effect.sync(() => newestFirst(byId(deliveries), filter).map(copyDelivery)),

    retryDelivery: (id, at) =>
      Effect.sync(() => {
        const current = deliveries.get(id)
        if (current === undefined || current.status !== "dead") return Option.none()
        const delivery: Delivery = { ...current, status: "pending", attempts: 0, next_attempt_at: at, updated_at: at }
        deliveries.set(id, delivery)
        return Option.some(copyDelivery(delivery))
      }),

    retargetDeliveries: (botId, url, at) =>
      Effect.sync(() => {
        let moved = 0
        for (const delivery of deliveries.values()) {
          if (delivery.bot_id !== botId || delivery.status !== "pending") continue
          deliveries.set(delivery.id, { ...delivery, url, attempts: 0, next_attempt_at: at, updated_at: at })
          moved++
        }
        return moved
      }),

    nextSends: (botId, limit) => Effect.sync(() => firstPending(sends, botId, limit, readSend)),

    recordSend: (id, outcome, produced) =>
      Effect.sync(() => {
        if (!recordSendOutcome(id, outcome)) return
        for (const mapping of produced) {
          const mappingId = next.mapping++
          mappings.set(mappingId, copyMapping({ ...mapping, id: mappingId }))
        }
      }),

    listSends: (filter) =>
      Effect.sync(() => newestFirst(byId(sends), filter).map(readSend)),

    findReverse: (targetBotId, targetChatId, targetMessageId, since) =>
      Effect.sync(() =>
        newestMapping((m) =>
          m.reversible && m.target_bot_id === targetBotId && m.target_chat_id === targetChatId &&
          m.target_message_id === targetMessageId && m.created_at >= since
        )
      ),

    findProduced: (chatId, messageId) =>
      Effect.sync(() => newestMapping((m) => m.target_chat_id === chatId && m.target_message_id === messageId)),

    pruneMappings: (before, limit) =>
      Effect.sync(() => {
        let removed = 0
        for (const [id, mapping] of mappings) {
          if (removed >= limit) break
          if (mapping.created_at < before) {
            mappings.delete(id)
            removed++
          }
        }
        return removed
      }),

    confirmBuffered: (botId, offset) =>
      Effect.sync(() => forgetBuffered(botId, (ids) => ids.filter((id) => id < offset))),

    keepNewestBuffered: (botId, count) =>
      Effect.sync(() => forgetBuffered(botId, (ids) => ids.slice(0, Math.max(0, ids.length - count)))),

    readBuffered: (botId, query) =>
      Effect.sync(() => {
        const buffer = buffers.get(botId)
        if (buffer === undefined) return []
        return bufferedIds(botId)
          .filter((id) => id >= query.offset && passes(query.types, buffer.get(id)!.type))
          .slice(0, query.limit)
          .map((id) => ({ update_id: id, payload: buffer.get(id)!.payload }))
      }),

    countBuffered: (botId) => Effect.sync(() => buffers.get(botId)?.size ?? 0),

    dropBuffered: (botId) => Effect.sync(() => forgetBuffered(botId, (ids) => ids)),

    trimBuffered: (botId, retention) =>
      Effect.sync(() => {
        const buffer = buffers.get(botId)
        const dropped = forgetBuffered(botId, (ids) => {
          const excess = Math.max(0, ids.length - retention.max_updates)
          return ids.filter((id, i) => i < excess || buffer!.get(id)!.created_at < retention.before)
        })
        if (dropped > 0) {
          const state = stateOf(botId)
          bufferStates.set(botId, { ...state, trimmed: state.trimmed + dropped, last_trimmed_at: retention.at })
        }
        return dropped
      }),

    bufferState: (botId) =>
      Effect.sync(() => {
        const state = stateOf(botId)
        return { ...state, allowed_updates: [...state.allowed_updates] }
      }),

    setAllowedUpdates: (botId, types) =>
      Effect.sync(() => void bufferStates.set(botId, { ...stateOf(botId), allowed_updates: [...types] })),

    readSettings: (names) =>
      Effect.sync(() =>
        Object.fromEntries(names.flatMap((name) => {
          const value = settings.get(name)
          return value === undefined ? [] : [[name, value]]
        }))
      ),

    writeSettings: (values) =>
      Effect.sync(() => {
        for (const [name, value] of Object.entries(values)) {
          if (value === undefined) settings.delete(name)
          else settings.set(name, value)
        }
      }),

    ping: Effect.void
  }
  return service
})

/** Provides `Storage` backed by a fresh in-memory store for each build of the layer. */
export const layer: Layer.Layer<Storage> = Layer.effect(Storage, make)
