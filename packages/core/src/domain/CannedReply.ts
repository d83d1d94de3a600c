import { Schema } from "effect"

/** The most code points a canned reply's text holds (Telegram's limit of a message). */
export const maxTextLength = 4096

/** A canned reply's code: 1-32 of `a-z 0-9 _ -`. */
export const Code = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9_-]{1,32}$/, {
    message: () => "code must be 1 to 32 characters of a-z, 0-9, _ and -"
  })
)

/** A canned reply's text: 1 to 4096 code points, not only white space. */
export const ReplyText = Schema.String.pipe(
  Schema.filter((s) => s.trim() !== "", { message: () => "text must not be empty" }),
  Schema.filter((s) => [...s].length <= maxTextLength, {
    message: () => `text must be at most ${maxTextLength} characters`
  })
)

const BotIds = Schema.Array(Schema.Int.pipe(Schema.positive()))

/**
 * A reply the team shares, inserted by its `code`. `bot_ids` limits the bots it is offered for (empty: all);
 * times are Unix seconds.
 */
export const CannedReply = Schema.Struct({
  id: Schema.Int,
  code: Schema.String,
  text: Schema.String,
  bot_ids: Schema.Array(Schema.Int),
  created_at: Schema.Int,
  updated_at: Schema.Int
}).annotations({ identifier: "CannedReply" })
export type CannedReply = typeof CannedReply.Type

/** Body of `POST /api/canned-replies/add`. */
export const NewCannedReply = Schema.Struct({
  code: Code,
  text: ReplyText,
  bot_ids: Schema.optionalWith(BotIds, { default: () => [] })
}).annotations({ identifier: "NewCannedReply" })
export type NewCannedReply = typeof NewCannedReply.Type

/** Body of `POST /api/canned-replies/update`: partial, by `id`. */
export const CannedReplyUpdate = Schema.Struct({
  id: Schema.Int.pipe(Schema.positive()),
  code: Schema.optionalWith(Code, { exact: true }),
  text: Schema.optionalWith(ReplyText, { exact: true }),
  bot_ids: Schema.optionalWith(BotIds, { exact: true })
}).annotations({ identifier: "CannedReplyUpdate" })
export type CannedReplyUpdate = typeof CannedReplyUpdate.Type

/** What storage needs to keep a canned reply. */
export type CannedReplyRecordInput = Omit<CannedReply, "id">

/** `GET /api/canned-replies/render`: the reply's text with its variables filled. */
export const Rendered = Schema.Struct({ text: Schema.String }).annotations({ identifier: "RenderedReply" })

/** The variables a reply's text may hold, each written `{name}`. */
export interface Variables {
  readonly first_name: string
  readonly username: string
  readonly bot_name: string
}

/** The text with each known `{variable}` filled; anything else in braces stays as written. */
export const render = (text: string, variables: Variables): string =>
  text.replace(/\{([a-z_]+)\}/g, (written, name: string) =>
    Object.hasOwn(variables, name) ? variables[name as keyof Variables] : written)

/** Whether the reply is offered for the bot. */
export const offeredFor = (reply: CannedReply, botId: number): boolean =>
  reply.bot_ids.length === 0 || reply.bot_ids.includes(botId)

/** No canned reply has this id (or this code). */
export class CannedReplyNotFound extends Schema.TaggedError<CannedReplyNotFound>()("CannedReplyNotFound", {
  id: Schema.optional(Schema.Int),
  code: Schema.optional(Schema.String)
}) {
  override get message() {
    return this.code !== undefined ? `no canned reply has the code ${this.code}` : `canned reply ${this.id} not found`
  }
}

/** Another canned reply has the code (ignoring case). */
export class DuplicateCode extends Schema.TaggedError<DuplicateCode>()("DuplicateCode", { code: Schema.String }) {
  override get message() {
    return `a canned reply with the code ${this.code} exists already`
  }
}
