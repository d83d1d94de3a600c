import type { BotApi } from "@botrelay/telegram"
import * as Message from "../domain/Message.js"

/** Telegram's limits on a message's text and a media caption, in UTF-16 code units. */
export const textLimit = 4096
export const captionLimit = 1024

/** The largest file a bot may download with getFile, and so the largest one sent again. */
export const maxFileBytes = 20 * 1024 * 1024

type Entities = ReadonlyArray<BotApi.MessageEntity>

/** Text with its formatting, as sendMessage and captions take it. */
export interface Formatted {
  readonly text: string
  readonly entities: Entities
}

/** A media kind a bot can upload, with the method and parameter that carry it and whether it takes a caption. */
interface MediaKind {
  readonly method: string
  readonly field: string
  readonly caption: boolean
  readonly mime: string
}

const mediaKinds = {
  photo: { method: "sendPhoto", field: "photo", caption: true, mime: "image/jpeg" },
  video: { method: "sendVideo", field: "video", caption: true, mime: "video/mp4" },
  animation: { method: "sendAnimation", field: "animation", caption: true, mime: "video/mp4" },
  audio: { method: "sendAudio", field: "audio", caption: true, mime: "audio/mpeg" },
  voice: { method: "sendVoice", field: "voice", caption: true, mime: "audio/ogg" },
  document: { method: "sendDocument", field: "document", caption: true, mime: "application/octet-stream" },
  sticker: { method: "sendSticker", field: "sticker", caption: false, mime: "image/webp" },
  video_note: { method: "sendVideoNote", field: "video_note", caption: false, mime: "video/mp4" }
} satisfies Record<string, MediaKind>

/** A message's content as another bot sends it again. */
export type Content =
  | { readonly _tag: "Text"; readonly text: Formatted }
  | {
    readonly _tag: "Media"
    readonly method: string
    readonly field: string
    readonly file_id: string
    /** Declared by Telegram; undefined when unknown. */
    readonly file_size: number | undefined
    readonly file_name: string | undefined
    readonly mime_type: string
    /** Undefined for kinds that take no caption (stickers, video notes). */
    readonly caption: Formatted | undefined
  }
  | { readonly _tag: "Unsupported" }

const formatted = (text: string | undefined, entities: Entities | undefined): Formatted => ({
  text: text ?? "",
  entities: entities ?? []
})

/** What of the message can be sent again: its text, or its media with the caption. */
export const contentOf = (message: BotApi.Message): Content => {
  const media = mediaOf(message)
  if (media !== undefined) {
    const { file, kind, name } = media
    return {
      _tag: "Media",
      method: kind.method,
      field: kind.field,
      file_id: file.file_id,
      file_size: file.file_size,
      file_name: name,
      mime_type: file.mime_type ?? kind.mime,
      caption: kind.caption ? formatted(message.caption, message.caption_entities) : undefined
    }
  }
  if (message.text !== undefined && message.text !== "") {
    return { _tag: "Text", text: formatted(message.text, message.entities) }
  }
  return { _tag: "Unsupported" }
}

interface FileLike {
  readonly file_id: string
  readonly file_size?: number | undefined
  readonly file_name?: string | undefined
  readonly mime_type?: string | undefined
}

/** The message's media file as `Message.mediaOf` chooses it (the largest photo), with how to upload it. */
const mediaOf = (
  message: BotApi.Message
): { readonly file: FileLike; readonly kind: MediaKind; readonly name: string | undefined } | undefined => {
  const media = Message.mediaOf(message)
  if (media === undefined || media.media_type === "callback") return undefined
  const kind = mediaKinds[media.media_type]
  if (media.media_type === "photo") {
    const size = message.photo?.find((p) => p.file_id === media.file_id)
    return size === undefined ? undefined : { file: size, kind, name: undefined }
  }
  const file: FileLike | undefined = message[media.media_type]
  return file === undefined ? undefined : { file, kind, name: file.file_name }
}

/** The media fields of a message (`photo`, `video`, ...), as a copy of it carries them. */
export const mediaFields = (message: BotApi.Message): Partial<BotApi.Message> => {
  const fields: Partial<Record<keyof typeof mediaKinds, unknown>> = {}
  for (const key of Object.keys(mediaKinds) as Array<keyof typeof mediaKinds>) {
    if (message[key] !== undefined) fields[key] = message[key]
  }
  return fields as Partial<BotApi.Message>
}

/** "Jane Doe (@jane, id 42)": who sent the message, for the line that precedes its content. */
export const senderOf = (message: BotApi.Message): string => {
  const from = message.from
  if (from !== undefined) {
    const name = [from.first_name, from.last_name].filter((part) => part !== undefined && part !== "").join(" ")
    const handle = from.username === undefined ? "" : `@${from.username}, `
    return `${name} (${handle}id ${from.id})`
  }
  const chat = message.sender_chat ?? message.chat
  return chat.title ?? chat.username ?? `chat ${chat.id}`
}

/** The line naming the sender, as it precedes re-sent content. */
export const headerOf = (message: BotApi.Message): Formatted => {
  const text = `${senderOf(message)}:`
  return { text, entities: [{ type: "bold", offset: 0, length: text.length }] }
}

/**
 * The header and the content as one text, the content's entities shifted behind the header; undefined
 * when together they exceed `limit` (then the header goes as a message of its own).
 */
export const prefixed = (header: Formatted, content: Formatted, limit: number): Formatted | undefined => {
  if (content.text === "") return header.text.length <= limit ? header : undefined
  const text = `${header.text}\n${content.text}`
  if (text.length > limit) return undefined
  const shift = header.text.length + 1
  return {
    text,
    entities: [...header.entities, ...content.entities.map((e) => ({ ...e, offset: e.offset + shift }))]
  }
}

/** A file name for an upload: the original one, else the last part of Telegram's file path. */
export const fileNameOf = (content: Extract<Content, { _tag: "Media" }>, filePath: string): string =>
  content.file_name ?? (filePath.split("/").pop() || content.field)
