import { badRequest, type Failure, isFailure, ok } from "./Answer.js"
import type { FilePart } from "./Body.js"
import { chatFor } from "./Chats.js"
import { addFile, fileFields, photoSet } from "./Files.js"
import { albumMixFailure, fileTypeFor, kinds, type MediaKind, mediaSends, urlFileName } from "./MediaKinds.js"
import { captionOf, inlineKeyboard, post, replyTo } from "./Messages.js"
import { asInt, asText, isEmpty, type Json, type Params, parseJson } from "./Params.js"
import type { Bot, Context, Handler, State, StoredFile } from "./State.js"
import type { UploadedFile } from "./Types.js"

/** Where a send's media comes from. */
type MediaSource =
  | { readonly _tag: "Upload"; readonly field: string; readonly part: FilePart }
  | { readonly _tag: "Url"; readonly url: URL }
  | { readonly _tag: "Stored"; readonly file: StoredFile }

/** One checked InputMedia of an album. */
interface AlbumItem {
  readonly kind: MediaKind
  readonly source: MediaSource
  readonly caption: Json
  readonly options: Json
}

/**
 * The media a send names, as Telegram reads it: the part `attach://<name>` names, else a URL or a known
 * `file_id`; left empty, the part called `field`. Undefined when there is none.
 */
const mediaSource = (
  state: State,
  kind: MediaKind,
  value: unknown,
  field: string | undefined,
  context: Context
): MediaSource | Failure | undefined => {
  const text = typeof value === "string" ? value : ""
  if (text === "" || text.startsWith("attach://")) {
    const name = text === "" ? field : text.slice("attach://".length)
    const part = name === undefined ? undefined : context.files.get(name)
    return name === undefined || part === undefined ? undefined : { _tag: "Upload", field: name, part }
  }
  if (/^https?:\/\//i.test(text)) {
    return URL.canParse(text) ? { _tag: "Url", url: new URL(text) } : badRequest("wrong HTTP URL specified")
  }
  const file = state.files.get(text)
  if (file === undefined) return badRequest("wrong file identifier/HTTP URL specified")
  return file.kind === kind ? { _tag: "Stored", file } : badRequest("type of file mismatch")
}

/** The message field describing a new file; `options` holds the send's `duration`, `width`, `title`... */
const mediaField = (state: State, kind: MediaKind, file: StoredFile, fileName: string, options: Params): unknown => {
  const int = (key: string, fallback: number) => asInt(options[key]) ?? fallback
  const text = (key: string) => (isEmpty(options[key]) ? {} : { [key]: asText(options[key]) })
  const named = { file_name: fileName, mime_type: file.mime_type }
  switch (kind) {
    case "photo":
      return photoSet(state, file)
    case "document":
      return { ...named, ...fileFields(file) }
    case "video":
    case "animation":
      return {
        duration: int("duration", 0),
        width: int("width", 640),
        height: int("height", 360),
        ...named,
        ...fileFields(file)
      }
    case "audio":
      return { duration: int("duration", 0), ...text("performer"), ...text("title"), ...named, ...fileFields(file) }
    case "voice":
      return { duration: int("duration", 0), mime_type: file.mime_type, ...fileFields(file) }
    case "sticker":
      return {
        type: "regular",
        width: 512,
        height: 512,
        is_animated: file.mime_type === "application/x-tgsticker",
        is_video: file.mime_type === "video/webm",
        ...text("emoji"),
        ...fileFields(file)
      }
    case "video_note":
      return { duration: int("duration", 0), length: int("length", 240), ...fileFields(file) }
  }
}

/** The message field for `source`, with a new file unless it names a known one; uploads are logged. */
const attachMedia = (
  state: State,
  bot: Bot,
  method: string,
  kind: MediaKind,
  source: MediaSource,
  options: Params
): { readonly field: unknown; readonly upload?: UploadedFile } => {
  if (source._tag === "Stored") {
    return { field: state.mediaOf.get(source.file.file_id) ?? mediaField(state, kind, source.file, "", options) }
  }
  const name = source._tag === "Upload" ? source.part.file_name : urlFileName(source.url, kind)
  const type = fileTypeFor(kind, name, source._tag === "Upload" ? source.part.mime_type : undefined)
  const file = addFile(state, kind, source._tag === "Upload" ? source.part.bytes : 40_000, type)
  const field = mediaField(state, kind, file, name, options)
  state.mediaOf.set(file.file_id, field)
  if (source._tag === "Url") return { field }
  const upload: UploadedFile = {
    botId: bot.id,
    method,
    field: source.field,
    file_id: file.file_id,
    file_unique_id: file.file_unique_id,
    file_name: source.part.file_name,
    mime_type: source.part.mime_type,
    file_size: file.file_size,
    sha256: source.part.sha256
  }
  state.uploadLog.push(upload)
  return { field, upload }
}

/** `sendPhoto`, `sendDocument` and the like: one message with the media `params[kind]` names. */
const sendMedia = (state: State, kind: MediaKind, method: string): Handler => (bot, params, context) => {
  const source = mediaSource(state, kind, params[kind], kind, context)
  if (source === undefined) return badRequest(`there is no ${kind.replace("_", " ")} in the request`)
  const caption = kinds[kind].caption ? captionOf(params) : {}
  if (isFailure(caption)) return caption
  const chat = chatFor(state, bot, params["chat_id"], "write")
  if (isFailure(chat)) return chat
  const reply = replyTo(state, bot, chat, params)
  if (isFailure(reply)) return reply
  if (isFailure(source)) return source
  const media = attachMedia(state, bot, method, kind, source, params)
  return ok(post(state, bot, chat, {
    ...reply,
    [kind]: media.field,
    ...caption,
    ...inlineKeyboard(params["reply_markup"])
  }, method, media.upload))
}

/** One InputMedia of `sendMediaGroup`, or Telegram's reason to refuse it. */
const albumItem = (state: State, value: unknown, context: Context): AlbumItem | Failure => {
  const options = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined
  if (options === undefined) return badRequest("can't parse InputMedia: expected an Object")
  const caption = captionOf(options)
  if (isFailure(caption)) return caption
  const type = asText(options["type"])
  if (type === "animation") {
    return badRequest("can't parse InputMedia: type \"animation\" can't be used in sendMediaGroup")
  }
  if (!["photo", "video", "document", "audio"].includes(type)) {
    return badRequest(`can't parse InputMedia: type "${type}" is unsupported`)
  }
  const kind = type as MediaKind
  const source = mediaSource(state, kind, options["media"], undefined, context)
  if (source === undefined) return badRequest("can't parse InputMedia: media not found")
  return isFailure(source) ? source : { kind, source, caption, options }
}

/** The items of `sendMediaGroup`'s `media`, or Telegram's reason to refuse the album. */
const albumItems = (state: State, value: unknown, context: Context): ReadonlyArray<AlbumItem> | Failure => {
  if (isEmpty(value)) return badRequest("parameter \"media\" is required")
  const media = parseJson(value)
  if (media === undefined) return badRequest("can't parse media JSON object")
  if (!Array.isArray(media)) return badRequest("expected an Array of InputMedia")
  if (media.length === 0) return badRequest("there are no messages to send")
  if (media.length > 10) return badRequest("too many messages to send as an album")
  const items: Array<AlbumItem> = []
  for (const entry of media) {
    const item = albumItem(state, entry, context)
    if (isFailure(item)) return item
    items.push(item)
  }
  return albumMixFailure(items.map((item) => item.kind)) ?? items
}

/** The media methods: one send per kind, and `sendMediaGroup`. */
export const mediaMethods = (state: State): Readonly<Record<string, Handler>> => ({
  ...Object.fromEntries(
    Object.entries(mediaSends).map(([method, kind]) => [method, sendMedia(state, kind, method)])
  ),
  sendMediaGroup: (bot, params, context) => {
    const items = albumItems(state, params["media"], context)
    if (isFailure(items)) return items
    const chat = chatFor(state, bot, params["chat_id"], "write")
    if (isFailure(chat)) return chat
    const reply = replyTo(state, bot, chat, params)
    if (isFailure(reply)) return reply
    const album = items.length > 1
      ? { media_group_id: `${state.queryPrefix}${String(state.nextAlbum++).padStart(11, "0")}` }
      : {}
    return ok(items.map((item) => {
      const media = attachMedia(state, bot, "sendMediaGroup", item.kind, item.source, item.options)
      return post(state, bot, chat, {
        ...reply,
        ...album,
        [item.kind]: media.field,
        ...item.caption
      }, "sendMediaGroup", media.upload)
    }))
  }
})
