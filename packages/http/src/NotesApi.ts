import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { CannedReply, Note } from "@botrelay/core"
import { Schema } from "effect"
import { ChatId, ChatPageQuery, Id } from "./QueryParams.js"

/**
 * The contract of team work in chats: private notes, a chat's timeline of messages and notes, and the canned
 * replies the team shares. The groups get their authorization where `Api` adds them.
 */

/** Query of `GET /api/notes`: one chat. */
export const NotesQuery = Schema.Struct({ bot_id: Id, chat_id: ChatId })

/** Query of `GET /api/chats/timeline`: one chat, a page as `GET /api/messages` takes it. */
export const TimelineQuery = ChatPageQuery

/** Private notes of the team in chats; signed-in accounts only. */
export class NotesGroup extends HttpApiGroup.make("notes")
  .add(HttpApiEndpoint.get("list", "/").setUrlParams(NotesQuery).addSuccess(Schema.Array(Note.Note)))
  .add(HttpApiEndpoint.post("add", "/add").setPayload(Note.NewNote).addSuccess(Note.Note))
  .add(HttpApiEndpoint.post("update", "/update").setPayload(Note.NoteUpdate).addSuccess(Note.Note))
  .add(HttpApiEndpoint.post("delete", "/delete").setUrlParams(Schema.Struct({ id: Id })).addSuccess(Note.Note))
  .prefix("/notes")
{}

/** A chat's messages and notes in one list, newest first. */
export class TimelineGroup extends HttpApiGroup.make("timeline")
  .add(
    HttpApiEndpoint.get("get", "/timeline").setUrlParams(TimelineQuery).addSuccess(Schema.Array(Note.TimelineItem))
  )
  .prefix("/chats")
{}

/** Query of `GET /api/canned-replies`: with `bot_id`, the replies offered for that bot. */
export const CannedRepliesQuery = Schema.Struct({ bot_id: Schema.optionalWith(Id, { exact: true }) })

/** Query of `GET /api/canned-replies/render`. */
export const RenderQuery = Schema.Struct({
  code: Schema.String.pipe(Schema.minLength(1, { message: () => "code must not be empty" })),
  bot_id: Id,
  chat_id: ChatId
})

/** The canned replies the team shares. */
export class CannedRepliesGroup extends HttpApiGroup.make("cannedReplies")
  .add(
    HttpApiEndpoint.get("list", "/").setUrlParams(CannedRepliesQuery).addSuccess(Schema.Array(CannedReply.CannedReply))
  )
  .add(HttpApiEndpoint.post("add", "/add").setPayload(CannedReply.NewCannedReply).addSuccess(CannedReply.CannedReply))
  .add(
    HttpApiEndpoint.post("update", "/update").setPayload(CannedReply.CannedReplyUpdate).addSuccess(CannedReply.CannedReply)
  )
  .add(
    HttpApiEndpoint.post("delete", "/delete").setUrlParams(Schema.Struct({ id: Id })).addSuccess(CannedReply.CannedReply)
  )
  .add(HttpApiEndpoint.get("render", "/render").setUrlParams(RenderQuery).addSuccess(CannedReply.Rendered))
  .prefix("/canned-replies")
{}
