/** The parameters of a Bot API call, by name: JSON values, or strings when they came in a query or a form. */
export type CallParams = Readonly<Record<string, unknown>>

const latin1 = new TextDecoder("latin1")
const utf8 = new TextDecoder("utf-8")

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const fromSearch = (search: string): Record<string, unknown> => {
  const params: Record<string, unknown> = {}
  for (const [key, value] of new URLSearchParams(search)) params[key] = value
  return params
}

const boundaryOf = (contentType: string): string | undefined => {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
  return match === null ? undefined : match[1] ?? match[2]
}

/** The most bytes a multipart part's headers may take; a part with more ends the reading. */
export const maxPartHeaderBytes = 8 * 1024

/** The parameters of a header value (`form-data; name="a"; filename="b"`), by lower-case name. */
const headerParams = (value: string): Map<string, string> => {
  const params = new Map<string, string>()
  const pieces: Array<string> = []
  let quoted = false
  let from = 0
  for (let i = 0; i < value.length; i++) {
    if (value[i] === "\"") quoted = !quoted
    else if (value[i] === ";" && !quoted) {
      pieces.push(value.slice(from, i))
      from = i + 1
    }
  }
  pieces.push(value.slice(from))
  for (const piece of pieces) {
    const equals = piece.indexOf("=")
    if (equals === -1) continue
    let text = piece.slice(equals + 1).trim()
    if (text.startsWith("\"")) text = text.slice(1, text.length > 1 && text.endsWith("\"") ? -1 : undefined)
    params.set(piece.slice(0, equals).trim().toLowerCase(), text)
  }
  return params
}

/** The `name` of a part that is a text field, from its header block; undefined for uploads and others. */
const fieldName = (headers: string): string | undefined => {
  for (const line of headers.split("\r\n")) {
    const colon = line.indexOf(":")
    if (colon === -1 || line.slice(0, colon).trim().toLowerCase() !== "content-disposition") continue
    const params = headerParams(line.slice(colon + 1))
    return params.has("filename") || params.has("filename*") ? undefined : params.get("name")
  }
  return undefined
}

/**
 * The text fields of a multipart body, read leniently in one pass: parts with a `filename` (uploads)
 * are skipped, and a part that does not parse, or whose headers pass `maxPartHeaderBytes`, ends the
 * reading instead of failing it. Hand-written because no runtime-neutral library keeps this contract:
 * `@remix-run/multipart-parser` refuses a preamble and reads header parameters case-sensitively
 * (`NAME=`); `Request.formData()` fails a whole body for one bad part, has no header limit, and
 * reportedly does not parse grammY's uploads.
 */
const fromMultipart = (body: Uint8Array, boundary: string): Record<string, unknown> => {
  const params: Record<string, unknown> = {}
  const text = latin1.decode(body)
  const delimiter = `--${boundary}`
  let at = text.indexOf(delimiter)
  while (at !== -1) {
    const start = at + delimiter.length
    if (text.startsWith("--", start)) break
    const next = text.indexOf(`\r\n${delimiter}`, start)
    if (next === -1) break
    const headerEnd = text.slice(start, Math.min(next, start + maxPartHeaderBytes + 4)).indexOf("\r\n\r\n")
    if (headerEnd === -1) break
    const name = fieldName(utf8.decode(body.subarray(start, start + headerEnd)))
    if (name !== undefined) params[name] = utf8.decode(body.subarray(start + headerEnd + 4, next))
    at = next + 2
  }
  return params
}

/**
 * The parameters of a call: the query string (`?a=1`, with or without the `?`), overridden by the body's
 * fields when the body is JSON, urlencoded or multipart. A body that does not parse adds nothing.
 */
export const parse = (search: string, body: Uint8Array | undefined, contentType: string | undefined): CallParams => {
  const params = search === "" || search === "?" ? {} : fromSearch(search)
  if (body === undefined || body.length === 0) return params
  const type = (contentType ?? "").toLowerCase()
  if (type.startsWith("multipart/form-data")) {
    const boundary = boundaryOf(contentType!)
    return boundary === undefined ? params : { ...params, ...fromMultipart(body, boundary) }
  }
  if (type.startsWith("application/x-www-form-urlencoded")) return { ...params, ...fromSearch(utf8.decode(body)) }
  try {
    const parsed: unknown = JSON.parse(utf8.decode(body))
    return isRecord(parsed) ? { ...params, ...parsed } : params
  } catch {
    return params
  }
}

const decodeJson = (value: string): unknown => {
  try {
    return JSON.parse(value)
  } catch {
    return undefined
  }
}

/**
 * An integer as Telegram reads one: a JSON number truncated (2.5 is 2), or the leading integer of a
 * text ("2.5" and "2abc" are 2); undefined when there is none or it is not a safe integer.
 */
export const int = (value: unknown): number | undefined => {
  let number: number | undefined
  if (typeof value === "number") number = Math.trunc(value)
  else if (typeof value === "string") {
    const match = /^\s*-?\d{1,20}/.exec(value)
    number = match === null ? undefined : Number(match[0])
  }
  return number !== undefined && Number.isSafeInteger(number) ? number + 0 : undefined
}

/** A boolean: true/false, or their text ("true", "1", "false", "0", any case); undefined otherwise. */
export const bool = (value: unknown): boolean | undefined => {
  if (typeof value === "boolean") return value
  if (typeof value === "number") return value !== 0
  if (typeof value !== "string") return undefined
  const text = value.trim().toLowerCase()
  if (text === "true" || text === "1") return true
  if (text === "false" || text === "0" || text === "") return false
  return undefined
}

/** A string parameter; numbers become their text. */
export const string = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined

/** An array, or a JSON array in text (forms and query strings); undefined otherwise. */
export const array = (value: unknown): ReadonlyArray<unknown> | undefined => {
  const decoded = typeof value === "string" ? decodeJson(value) : value
  return Array.isArray(decoded) ? decoded : undefined
}

/** An object, or a JSON object in text (forms and query strings); undefined otherwise. */
export const object = (value: unknown): Readonly<Record<string, unknown>> | undefined => {
  const decoded = typeof value === "string" ? decodeJson(value) : value
  return isRecord(decoded) ? decoded : undefined
}
