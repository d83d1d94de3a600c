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

/**
 * The text fields of a multipart body, read leniently: parts with a `filename` (uploads) are skipped,
 * and a part that does not parse ends the reading instead of failing it.
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
    const headerEnd = text.indexOf("\r\n\r\n", start)
    if (headerEnd !== -1 && headerEnd < next) {
      const headers = text.slice(start, headerEnd)
      const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? ""
      const name = /content-disposition:[^\r\n]*?;\s*name="([^"]*)"/di.exec(headers)?.indices?.[1]
      if (name !== undefined && !/;\s*filename\*?=/i.test(disposition)) {
        const key = utf8.decode(body.subarray(start + name[0], start + name[1]))
        params[key] = utf8.decode(body.subarray(headerEnd + 4, next))
      }
    }
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

/** An integer: a JSON number or its decimal text; undefined otherwise. */
export const int = (value: unknown): number | undefined => {
  const number = typeof value === "string" && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value
  return typeof number === "number" && Number.isSafeInteger(number) ? number : undefined
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
