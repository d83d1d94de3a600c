import { type QueryClient, useQuery, useQueryClient } from "@tanstack/react-query"
import { api, type Message, type Schemas, unwrap } from "../../api/client"
import { type LiveEvent, useLiveEvents } from "../../live"

export type Note = Schemas["Note"]
export type CannedReply = Schemas["CannedReply"]

/** Query keys of notes and canned replies. */
export const noteKeys = {
  notes: (botId: number, chatId: number) => ["notes", botId, chatId] as const,
  canned: (botId: number | undefined) => ["canned-replies", botId ?? "all"] as const,
  allCanned: ["canned-replies"] as const
}

/** Reloads a chat's notes when a live `note` event (or a reset) says they changed. */
const applyNoteEvent = (client: QueryClient, botId: number, chatId: number, event: LiveEvent) => {
  const data = event as { readonly type: string; readonly bot_id?: number; readonly chat_id?: number }
  if (data.type === "reset" || data.type === "note" && data.bot_id === botId && data.chat_id === chatId) {
    void client.invalidateQueries({ queryKey: noteKeys.notes(botId, chatId) })
  }
}

/** A chat's private notes, oldest first, kept live. */
export const useNotes = (botId: number, chatId: number) => {
  const client = useQueryClient()
  useLiveEvents((event) => applyNoteEvent(client, botId, chatId, event))
  return useQuery({
    queryKey: noteKeys.notes(botId, chatId),
    queryFn: async () =>
      [...await unwrap(api.GET("/api/notes", { params: { query: { bot_id: String(botId), chat_id: String(chatId) } } }))]
        .reverse(),
    staleTime: 30_000
  })
}

/** A message or a note of the chat's log, oldest first. */
export type LogItem =
  | { readonly kind: "message"; readonly message: Message; readonly note?: undefined }
  | { readonly kind: "note"; readonly note: Note; readonly message?: undefined }

/**
 * Messages (oldest first) with the notes written among them: a note after the messages of its second; notes
 * older than the oldest loaded message wait until that page is loaded (`complete` says all are).
 */
export const withNotes = (messages: ReadonlyArray<Message>, notes: ReadonlyArray<Note>, complete: boolean): Array<LogItem> => {
  const oldest = messages[0]?.date
  const shown = complete || oldest === undefined ? notes : notes.filter((n) => n.created_at >= oldest)
  const items: Array<LogItem> = []
  let n = 0
  for (const message of messages) {
    while (n < shown.length && shown[n]!.created_at < message.date) items.push({ kind: "note", note: shown[n++]! })
    items.push({ kind: "message", message })
  }
  while (n < shown.length) items.push({ kind: "note", note: shown[n++]! })
  return items
}

/** The canned replies offered for the bot, by code. */
export const useCannedReplies = (botId: number | undefined) =>
  useQuery({
    queryKey: noteKeys.canned(botId),
    queryFn: () =>
      unwrap(api.GET("/api/canned-replies", { params: { query: botId === undefined ? {} : { bot_id: String(botId) } } })),
    staleTime: 30_000
  })
