import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Accounts, type ApiKeys, type AuditLog, type Chat, Chats, Note, Notes } from "@botrelay/core"
import { Effect, Layer } from "effect"
import { forbidden, orDomain, requireChat } from "./Access.js"
import { Api, Caller, type CallerInfo } from "./Api.js"
import * as ApiError from "./ApiError.js"
import { audited, recordDenied } from "./Audited.js"
import { AuthorizationLive } from "./Authentication.js"

/** The failures of notes and the timeline. */
type NotesError =
  | ApiError.ApiError
  | ApiError.DomainError
  | Chat.ChatNotFound
  | Chat.HistoryDisabled
  | Note.NoteNotFound
  | Note.NoteNotYours

/** Translates the notes' own failures, and the others as every handler does. */
const orNotes = (e: NotesError) => {
  switch (e._tag) {
    case "ChatNotFound":
      return Effect.fail(new ApiError.NotFound({ error: e.message, code: "chat_not_found" }))
    case "HistoryDisabled":
      return Effect.fail(new ApiError.Conflict({ error: e.message, code: "history_disabled" }))
    case "NoteNotFound":
      return Effect.fail(new ApiError.NotFound({ error: e.message, code: "note_not_found" }))
    case "NoteNotYours":
      return forbidden(e.message)
    default:
      return orDomain(e)
  }
}

/** The signed-in account making the request; API keys are refused (403 `account_required`), recorded as denied. */
export const requireAccount = Effect.flatMap(Caller, (caller) => {
  if (caller.type === "account") return Effect.succeed(caller)
  const error = "notes belong to signed-in accounts: API keys may not read or write them"
  return Effect.zipRight(recordDenied(error), Effect.fail(new ApiError.Forbidden({ error, code: "account_required" })))
})

/** A note as the audit log records it. */
const onNote = (note: Note.Note) => ({
  target_type: "note",
  target_id: note.id,
  bot_id: note.bot_id,
  chat_id: note.chat_id
})

const NotesLive = HttpApiBuilder.group(Api, "notes", (handlers) =>
  Effect.gen(function*() {
    const notes = yield* Notes.Notes
    const chats = yield* Chats.Chats
    const accounts = yield* Accounts.Accounts

    /** The account as a note's author: its display name, else its username. */
    const authorOf = (caller: CallerInfo) =>
      accounts.get(caller.id).pipe(
        Effect.map((account) => account.display_name === "" ? account.username : account.display_name),
        Effect.orElseSucceed(() => caller.name),
        Effect.map((name) => ({ id: caller.id, name, admin: caller.role === "admin" }))
      )

    /** The account, once it may do `ability` in the chat and the chat exists. */
    const inChat = (botId: number, chatId: number, ability: "read" | "reply") =>
      requireAccount.pipe(
        Effect.tap(() => requireChat(botId, chatId, ability)),
        Effect.tap(() => chats.get(botId, chatId))
      )

    /** The note and the account, once the account may reply in the note's chat. */
    const onOwnChat = (id: number) =>
      requireAccount.pipe(
        Effect.zip(notes.get(id)),
        Effect.tap(([, note]) => requireChat(note.bot_id, note.chat_id, "reply"))
      )

    return handlers
      .handle("list", ({ urlParams }) =>
        inChat(urlParams.bot_id, urlParams.chat_id, "read").pipe(
          Effect.zipRight(notes.list(urlParams.bot_id, urlParams.chat_id)),
          Effect.catchAll(orNotes)
        ))
      .handle("add", ({ payload }) =>
        audited(
          "notes.add",
          { target_type: "note", bot_id: payload.bot_id, chat_id: payload.chat_id },
          inChat(payload.bot_id, payload.chat_id, "reply").pipe(
            Effect.flatMap(authorOf),
            Effect.flatMap((author) => notes.add(payload, author)),
            Effect.catchAll(orNotes)
          ),
          onNote
        ))
      .handle("update", ({ payload }) =>
        audited(
          "notes.update",
          { target_type: "note", target_id: payload.id },
          onOwnChat(payload.id).pipe(
            Effect.flatMap(([caller]) => authorOf(caller)),
            Effect.flatMap((author) => notes.update(payload, author)),
            Effect.catchAll(orNotes)
          ),
          onNote
        ))
      .handle("delete", ({ urlParams }) =>
        audited(
          "notes.delete",
          { target_type: "note", target_id: urlParams.id },
          onOwnChat(urlParams.id).pipe(
            Effect.flatMap(([caller]) => authorOf(caller)),
            Effect.flatMap((author) => notes.remove(urlParams.id, author)),
            Effect.catchAll(orNotes)
          ),
          onNote
        ))
  }))

const TimelineLive = HttpApiBuilder.group(Api, "timeline", (handlers) =>
  Effect.gen(function*() {
    const notes = yield* Notes.Notes
    const chats = yield* Chats.Chats
    return handlers.handle("get", ({ urlParams }) =>
      requireChat(urlParams.bot_id, urlParams.chat_id, "read").pipe(
        Effect.zipRight(chats.get(urlParams.bot_id, urlParams.chat_id)),
        Effect.zipRight(Caller),
        Effect.flatMap((caller) => notes.timeline(urlParams, caller.type === "account")),
        Effect.catchAll(orNotes)
      ))
  }))

/** The handlers of notes and the timeline, on the core services. */
export const layer: Layer.Layer<
  HttpApiGroup.ApiGroup<"botrelay", "notes"> | HttpApiGroup.ApiGroup<"botrelay", "timeline">,
  never,
  Notes.Notes | Chats.Chats | Accounts.Accounts | ApiKeys.ApiKeys | AuditLog.AuditLog
> = Layer.mergeAll(NotesLive, TimelineLive).pipe(Layer.provide(AuthorizationLive))
