import { type InfiniteData, matchQuery, type QueryClient, useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query"
import { useEffect } from "react"
import { api, type Bot, type Chat, type Message, type Schemas, unwrap } from "../../api/client"
import type { LiveEvent } from "../../live"
import { botsKey, useBots } from "../../ui/bots"

export type ChatPage = Schemas["ChatPage"]
export type FoundItem = Schemas["SearchItem"]
export type Person = Schemas["Person"]

/** The chat list's tabs: assigned to the caller, to nobody, every chat not resolved, the resolved ones. */
export type ChatTab = "mine" | "unassigned" | "all" | "resolved"

export const chatTabs: ReadonlyArray<ChatTab> = ["mine", "unassigned", "all", "resolved"]

const unresolved = "open,pending,snoozed"

/** The `GET /api/chats` filters of a tab. */
const tabQuery = (tab: ChatTab) =>
  tab === "resolved"
    ? { status: "resolved" }
    : tab === "mine"
    ? { status: unresolved, assignee: "me" }
    : tab === "unassigned"
    ? { status: unresolved, assignee: "none" }
    : { status: unresolved }

/** Whether a chat belongs in a tab, as the API filters it; `me` is the signed-in account. */
export const inTab = (chat: Chat, tab: ChatTab, me: number) =>
  tab === "resolved"
    ? chat.status === "resolved"
    : chat.status !== "resolved" && (tab === "all" || chat.assignee_id === (tab === "mine" ? me : 0))

/**
 * Query keys of the chats area. The chat lists are `["chats", "list", q, tab, me]`, one chat
 * `["chats", "one", bot, chat]`, the tabs' counts `["chats", "counts"]`.
 */
export const keys = {
  bots: botsKey,
  lists: ["chats", "list"] as const,
  list: (q: string, tab: ChatTab, me: number) => ["chats", "list", q, tab, me] as const,
  counts: ["chats", "counts"] as const,
  chat: (botId: number, chatId: number) => ["chats", "one", botId, chatId] as const,
  messages: (botId: number, chatId: number) => ["messages", botId, chatId] as const,
  allMessages: ["messages"] as const,
  person: (userId: number) => ["people", "one", userId] as const,
  tags: (botId: number, chatId: number, userId: number) => ["tags", botId, chatId, userId] as const,
  search: (q: string) => ["search", q] as const
}

/** Chats per page of the list; messages per page of a chat. */
export const chatPageSize = 100
export const messagePageSize = 50

/** The bots by id (empty while loading). */
export const useBotsById = (): ReadonlyMap<number, Bot> => {
  const { data } = useBots()
  return new Map((data ?? []).map((b) => [b.id, b]))
}

/** The chats of a tab, newest activity first, a page at a time by the API's cursor; `q` filters on the server. */
export const useChatList = (q: string, tab: ChatTab, me: number) =>
  useInfiniteQuery({
    queryKey: keys.list(q, tab, me),
    queryFn: ({ pageParam }) =>
      unwrap(api.GET("/api/chats", {
        params: {
          query: {
            limit: String(chatPageSize),
            ...tabQuery(tab),
            ...(q === "" ? {} : { q }),
            ...(pageParam === undefined ? {} : { cursor: pageParam })
          }
        }
      })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last: ChatPage) => last.next_cursor ?? undefined,
    staleTime: 30_000
  })

/**
 * How many chats each tab has, from the counts the server keeps; fetched again whenever a chat list is fetched
 * after them, since that list may show chats stored since (whose live events then add nothing new).
 */
export const useChatCounts = () => {
  const client = useQueryClient()
  useEffect(
    () =>
      client.getQueryCache().subscribe((event) => {
        if (event.type !== "updated" || event.action.type !== "success") return
        if (!matchQuery({ queryKey: keys.lists }, event.query)) return
        const countsAt = client.getQueryState(keys.counts)?.dataUpdatedAt ?? 0
        if (countsAt !== 0 && event.query.state.dataUpdatedAt > countsAt) {
          void client.invalidateQueries({ queryKey: keys.counts })
        }
      }),
    [client]
  )
  return useQuery({
    queryKey: keys.counts,
    queryFn: () => unwrap(api.GET("/api/chats/counts")),
    staleTime: 30_000
  })
}

/** A tab's count from the server's counts. */
export const tabCount = (counts: Schemas["ChatCounts"], tab: ChatTab): number =>
  tab === "resolved"
    ? counts.status.resolved
    : tab === "mine"
    ? counts.assignee.me
    : tab === "unassigned"
    ? counts.assignee.none
    : counts.status.open + counts.status.pending + counts.status.snoozed

export const useChat = (botId: number, chatId: number) =>
  useQuery({
    queryKey: keys.chat(botId, chatId),
    queryFn: () =>
      unwrap(api.GET("/api/chats/get", { params: { query: { bot_id: String(botId), chat_id: String(chatId) } } })),
    staleTime: 30_000
  })

/**
 * What tells messages apart in a chat: a message sent through the API by its `local_id` (its `id` is 0 until
 * Telegram numbers it), the others by `id`.
 */
export const messageKey = (m: Pick<Message, "id" | "local_id">): string =>
  m.local_id === undefined ? `m${m.id}` : `l${m.local_id}`

/** Whether two records are of the same message: the same `local_id`, or the same `id` when either has none. */
const sameMessage = (a: Message, b: Message) =>
  a.local_id !== undefined && b.local_id !== undefined ? a.local_id === b.local_id : a.id === b.id && a.id !== 0

/** Distinct messages of the loaded pages, oldest first (the API pages newest first). */
export const chronological = (pages: ReadonlyArray<ReadonlyArray<Message>>): Array<Message> => {
  const byKey = new Map<string, Message>()
  for (const page of pages) {
    for (const m of page) if (!byKey.has(messageKey(m))) byKey.set(messageKey(m), m)
  }
  return [...byKey.values()].sort((a, b) => a.date - b.date || a.id - b.id)
}

const distinctCount = (pages: ReadonlyArray<ReadonlyArray<Message>>) => {
  const ids = new Set<number>()
  for (const page of pages) for (const m of page) ids.add(m.id)
  return ids.size
}

/**
 * One chat's history, newest page first. Pages are by offset; live messages are added to the first
 * page, so the count of distinct messages loaded is the offset of the next older page (an overlap,
 * after missed events, is removed by `chronological`).
 */
export const useMessages = (botId: number, chatId: number) =>
  useInfiniteQuery({
    queryKey: keys.messages(botId, chatId),
    queryFn: ({ pageParam }) =>
      unwrap(api.GET("/api/messages", {
        params: {
          query: {
            bot_id: String(botId),
            chat_id: String(chatId),
            limit: String(messagePageSize),
            offset: String(pageParam)
          }
        }
      })),
    initialPageParam: 0,
    getNextPageParam: (last: ReadonlyArray<Message>, all: ReadonlyArray<ReadonlyArray<Message>>) =>
      last.length < messagePageSize ? undefined : distinctCount(all),
    staleTime: 30_000
  })

export const usePerson = (userId: number | undefined) =>
  useQuery({
    queryKey: keys.person(userId ?? 0),
    queryFn: () => unwrap(api.GET("/api/people/get", { params: { query: { user_id: String(userId) } } })),
    enabled: userId !== undefined && userId > 0,
    staleTime: 30_000
  })

export const useTags = (botId: number, chatId: number, userId: number | undefined) =>
  useQuery({
    queryKey: keys.tags(botId, chatId, userId ?? 0),
    queryFn: () =>
      unwrap(api.GET("/api/tags", {
        params: { query: { bot_id: String(botId), chat_id: String(chatId), user_id: String(userId) } }
      })),
    enabled: userId !== undefined && userId > 0
  })

export const searchPageSize = 30

export const useMessageSearch = (q: string) =>
  useInfiniteQuery({
    queryKey: keys.search(q),
    queryFn: ({ pageParam }) =>
      unwrap(api.GET("/api/search", {
        params: {
          query: { q, limit: String(searchPageSize), ...(pageParam === undefined ? {} : { cursor: pageParam }) }
        }
      })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last: Schemas["SearchPage"]) => last.next_cursor ?? undefined,
    enabled: q.trim() !== ""
  })

// --- names ---

const joined = (...parts: ReadonlyArray<string>) => parts.filter((p) => p !== "").join(" ")

/** A group's title, or a private chat's person's "First Last" (else @username, else the id). */
export const chatName = (chat: Chat): string =>
  (chat.type === "private" ? joined(chat.first_name, chat.last_name) : chat.title) ||
  (chat.username === "" ? String(chat.chat_id) : "@" + chat.username)

/** A message's sender: "First Last", else @username, else the bot's name for its own messages. */
export const senderName = (m: Pick<Message, "first_name" | "last_name" | "username" | "user_id">, fallback: string) =>
  joined(m.first_name, m.last_name) || (m.username === "" ? fallback : "@" + m.username)

export const personName = (p: Pick<Person, "first_name" | "last_name" | "username" | "user_id">) =>
  joined(p.first_name, p.last_name) || (p.username === "" ? String(p.user_id) : "@" + p.username)

export const isGroup = (chat: Pick<Chat, "type">) => chat.type === "group" || chat.type === "supergroup"

export const mediaUrl = (botId: number, fileId: string) =>
  `api/media?bot_id=${botId}&file_id=${encodeURIComponent(fileId)}`

// --- caches: the list, one chat, its messages; patched from answers and live events ---

/** The list's order: `last_message_at` desc, then `bot_id` desc, then `chat_id` desc (as the API sorts). */
const before = (a: Chat, b: Chat) =>
  a.last_message_at !== b.last_message_at
    ? a.last_message_at > b.last_message_at
    : a.bot_id !== b.bot_id
    ? a.bot_id > b.bot_id
    : a.chat_id > b.chat_id

const sameChat = (a: Pick<Chat, "bot_id" | "chat_id">, b: Pick<Chat, "bot_id" | "chat_id">) =>
  a.bot_id === b.bot_id && a.chat_id === b.chat_id

/** Whether a chat passes the list's `q` as the API filters (title, username, first or last name contain it). */
const matches = (chat: Chat, q: string) => {
  if (q === "") return true
  const needle = q.toLocaleLowerCase()
  return [chat.title, chat.username, chat.first_name, chat.last_name].some((s) =>
    s.toLocaleLowerCase().includes(needle)
  )
}

/**
 * Puts a chat where it now belongs in one loaded list: out of its old place, into the page its sort
 * key falls in. A chat that falls after the loaded pages, while more are to come, is left for the
 * page that will bring it.
 */
const placeChat = (data: InfiniteData<ChatPage, string | undefined>, chat: Chat, q: string, tab: ChatTab, me: number) => {
  const pages = data.pages.map((page) => ({ ...page, items: page.items.filter((c) => !sameChat(c, chat)) }))
  if (matches(chat, q) && inTab(chat, tab, me)) {
    let placed = false
    for (const page of pages) {
      const at = page.items.findIndex((c) => before(chat, c))
      if (at >= 0) {
        page.items.splice(at, 0, chat)
        placed = true
        break
      }
    }
    const last = pages.at(-1)
    if (!placed && last !== undefined && last.next_cursor === null) last.items.push(chat)
  }
  return { ...data, pages }
}

/** A chat as the API now shows it, into every loaded list and its own query. */
export const putChat = (client: QueryClient, chat: Chat) => {
  let known = client.getQueryData<Chat>(keys.chat(chat.bot_id, chat.chat_id))
  for (const [key, data] of client.getQueriesData<InfiniteData<ChatPage, string | undefined>>({ queryKey: keys.lists })) {
    if (data === undefined) continue
    known ??= data.pages.flatMap((page) => page.items).find((c) => sameChat(c, chat))
    const tab = chatTabs.find((t) => t === key[3]) ?? "all"
    client.setQueryData(key, placeChat(data, chat, typeof key[2] === "string" ? key[2] : "", tab, Number(key[4] ?? 0)))
  }
  client.setQueryData(keys.chat(chat.bot_id, chat.chat_id), chat)
  // the counts change only with a new chat, a status or an assignee
  if (known === undefined || known.status !== chat.status || known.assignee_id !== chat.assignee_id) {
    void client.invalidateQueries({ queryKey: keys.counts })
  }
}

/** A message as stored now, into its chat's loaded history (replaced where it is, else added as newest). */
export const putMessage = (client: QueryClient, message: Message) => {
  client.setQueryData<InfiniteData<Array<Message>, number>>(keys.messages(message.bot_id, message.chat_id), (data) => {
    if (data === undefined) return data
    let found = false
    const pages = data.pages.map((page) =>
      page.map((m) => {
        if (!sameMessage(m, message)) return m
        found = true
        // Telegram's copy of a message sent through the API comes without its delivery: keep it
        return m.local_id === undefined || message.local_id !== undefined ? message : {
          ...message,
          local_id: m.local_id,
          ...(m.delivery === undefined ? {} : { delivery: m.delivery }),
          ...(m.delivery_error === undefined ? {} : { delivery_error: m.delivery_error }),
          ...(m.delivery_at === undefined ? {} : { delivery_at: m.delivery_at })
        }
      })
    )
    if (!found) pages[0] = [message, ...(pages[0] ?? [])]
    return { ...data, pages }
  })
}

/**
 * Reloads the loaded pages of each list and chat history: refetched in place when few are loaded,
 * else back to the first page (older pages come back as they are scrolled to); and the open chats.
 */
export const reloadAll = (client: QueryClient) => {
  for (const prefix of [keys.lists, keys.allMessages]) {
    for (const [queryKey, data] of client.getQueriesData<InfiniteData<unknown>>({ queryKey: prefix })) {
      if (data !== undefined && data.pages.length > 3) void client.resetQueries({ queryKey, exact: true })
      else void client.invalidateQueries({ queryKey, exact: true })
    }
  }
  void client.invalidateQueries({ queryKey: ["chats", "one"] })
  void client.invalidateQueries({ queryKey: keys.counts })
  void client.invalidateQueries({ queryKey: keys.bots })
}

/** The chats area's caches kept live: the lists, the chat, its messages, the bots. */
export const applyLiveEvent = (client: QueryClient, event: LiveEvent) => {
  switch (event.type) {
    case "message":
    case "message_edited":
    case "message_deleted":
      putMessage(client, event.message)
      return
    case "chat":
      // reachability shows in the person's profile too
      if (event.chat_id > 0) void client.invalidateQueries({ queryKey: keys.person(event.chat_id) })
      if (event.chat !== undefined) putChat(client, event.chat)
      else {
        void client.invalidateQueries({ queryKey: keys.chat(event.bot_id, event.chat_id) })
        void client.invalidateQueries({ queryKey: keys.counts })
        void client.resetQueries({ queryKey: keys.lists })
      }
      return
    case "bot":
      client.setQueryData<Array<Bot>>(keys.bots, (bots) => {
        if (bots === undefined) return bots
        const others = bots.filter((b) => b.id !== event.bot_id)
        return event.bot === null ? others : [...others, event.bot].sort((a, b) => a.id - b.id)
      })
      return
    case "reset":
      reloadAll(client)
      return
    case "delivery":
      return
  }
}
