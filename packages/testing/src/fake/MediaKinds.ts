import { badRequest, type Failure } from "./Answer.js"

/** The kinds of media a message may carry, by their message field. */
export type MediaKind = "photo" | "document" | "video" | "audio" | "voice" | "animation" | "sticker" | "video_note"

/** How Telegram names and types the files of one kind of media. */
export interface KindInfo {
  readonly idPrefix: string
  readonly folder: string
  readonly extension: string
  readonly mime: string
  readonly caption: boolean
}

/** Each kind's file naming and typing. */
export const kinds: Readonly<Record<MediaKind, KindInfo>> = {
  photo: { idPrefix: "AgACAgIAAxkBAAI", folder: "photos", extension: "jpg", mime: "image/jpeg", caption: true },
  document: {
    idPrefix: "BQACAgIAAxkBAAI",
    folder: "documents",
    extension: "",
    mime: "application/octet-stream",
    caption: true
  },
  video: { idPrefix: "BAACAgIAAxkBAAI", folder: "videos", extension: "mp4", mime: "video/mp4", caption: true },
  audio: { idPrefix: "CQACAgIAAxkBAAI", folder: "music", extension: "mp3", mime: "audio/mpeg", caption: true },
  voice: { idPrefix: "AwACAgIAAxkBAAI", folder: "voice", extension: "oga", mime: "audio/ogg", caption: true },
  animation: { idPrefix: "CgACAgIAAxkBAAI", folder: "animations", extension: "mp4", mime: "video/mp4", caption: true },
  sticker: { idPrefix: "CAACAgIAAxkBAAI", folder: "stickers", extension: "webp", mime: "image/webp", caption: false },
  video_note: {
    idPrefix: "DQACAgIAAxkBAAI",
    folder: "video_notes",
    extension: "mp4",
    mime: "video/mp4",
    caption: false
  }
}

const mimeByExtension: Readonly<Record<string, string>> = {
  jpg: "image/jpeg", jpeg: "image/jpeg", png: "image/png", gif: "image/gif", webp: "image/webp", pdf: "application/pdf",
  txt: "text/plain", csv: "text/csv", json: "application/json", zip: "application/zip", mp4: "video/mp4",
  webm: "video/webm", mp3: "audio/mpeg", m4a: "audio/mp4", ogg: "audio/ogg", oga: "audio/ogg",
  tgs: "application/x-tgsticker"
}

/** The media sends, by method name, and the parameter that holds their media. */
export const mediaSends: Readonly<Record<string, MediaKind>> = {
  sendPhoto: "photo",
  sendDocument: "document",
  sendVideo: "video",
  sendAudio: "audio",
  sendVoice: "voice",
  sendAnimation: "animation",
  sendSticker: "sticker",
  sendVideoNote: "video_note"
}

/** The kinds whose messages have a caption. */
export const captionKinds = (Object.keys(kinds) as ReadonlyArray<MediaKind>).filter((kind) => kinds[kind].caption)

const extensionOf = (name: string) => /\.([A-Za-z0-9]{1,8})$/.exec(name)?.[1]?.toLowerCase() ?? ""

/** The MIME type and path extension Telegram gives a new file of `kind` named `name`, sent as `sentType`. */
export const fileTypeFor = (
  kind: MediaKind,
  name: string,
  sentType: string | undefined
): { readonly mime: string; readonly extension: string } => {
  const info = kinds[kind]
  if (kind !== "document" && kind !== "audio" && kind !== "sticker") return info
  const extension = extensionOf(name)
  const sent = sentType === "application/octet-stream" || sentType === "" ? undefined : sentType
  return {
    mime: sent ?? mimeByExtension[extension] ?? info.mime,
    extension: extension === "" ? info.extension : extension
  }
}

/** The file name Telegram takes from a URL: its last path segment, else one made from the kind. */
export const urlFileName = (url: URL, kind: MediaKind): string => {
  const last = url.pathname.split("/").at(-1) ?? ""
  try {
    if (last !== "") return decodeURIComponent(last)
  } catch {
    return last
  }
  return `${kind}.${kinds[kind].extension === "" ? "dat" : kinds[kind].extension}`
}

/** Telegram's refusal of an album that mixes documents or audio with other kinds. */
export const albumMixFailure = (itemKinds: ReadonlyArray<MediaKind>): Failure | undefined => {
  const alone = (["document", "audio"] as const).find((kind) =>
    itemKinds.includes(kind) && itemKinds.some((other) => other !== kind)
  )
  return alone === undefined ? undefined : badRequest(`${alone} can't be mixed with other media types`)
}
