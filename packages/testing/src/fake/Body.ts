import { createHash } from "node:crypto"
import { badRequest, type Failure } from "./Answer.js"
import { asObject, type Json, type Params } from "./Params.js"

/** A file part of a multipart body, its bytes as they came. */
export interface FilePart {
  readonly file_name: string
  readonly mime_type: string
  readonly bytes: Buffer
  readonly sha256: string
}

/** A request's parameters and file parts, or why its body does not parse. */
export type ParsedParams =
  | { readonly _tag: "Params"; readonly params: Params; readonly files: ReadonlyMap<string, FilePart> }
  | { readonly _tag: "Failure"; readonly failure: Failure }

/** No file parts. */
export const noFiles: ReadonlyMap<string, FilePart> = new Map()

/** The whole of a stream, as one buffer. */
export const readBody = (stream: NodeJS.ReadableStream): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.on("end", () => resolve(Buffer.concat(chunks)))
    stream.on("error", reject)
  })

/** One part of a multipart body; `filename` present makes it a file, as Telegram decides. */
interface Part {
  readonly name: string
  readonly filename: string | undefined
  readonly contentType: string | undefined
  readonly body: Buffer
}

/** The `boundary` parameter of a multipart Content-Type. */
const boundaryOf = (header: string): string | undefined => {
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(header)
  return match?.[1] ?? match?.[2]
}

/** The `key=value` parameters of a header value such as `form-data; name="a"; filename=b.jpg`, keys lowercased. */
const headerParams = (value: string): ReadonlyMap<string, string> => {
  const params = new Map<string, string>()
  for (const match of value.matchAll(/;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g)) {
    params.set(match[1]!.toLowerCase(), match[2] ?? match[3]!.trim())
  }
  return params
}

/** A part's headers (`Name: value` lines, any case, spaces optional), names lowercased. */
const partHeaders = (text: string): ReadonlyMap<string, string> => {
  const headers = new Map<string, string>()
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":")
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return headers
}

/**
 * The parts of a multipart body, or undefined when it is malformed. Only headers are decoded; a part's
 * body is a view of the request's bytes.
 */
const multipartParts = (body: Buffer, boundary: string): ReadonlyArray<Part> | undefined => {
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  const first = body.indexOf(delimiter.subarray(2))
  if (first < 0) return undefined
  const parts: Array<Part> = []
  let position = first + delimiter.length - 2
  while (!(body[position] === 0x2d && body[position + 1] === 0x2d)) {
    const lineEnd = body.indexOf("\r\n", position)
    const headersEnd = lineEnd < 0 ? -1 : body.indexOf("\r\n\r\n", lineEnd)
    const end = headersEnd < 0 ? -1 : body.indexOf(delimiter, headersEnd + 4)
    if (end < 0) return undefined
    const headers = partHeaders(body.toString("utf8", lineEnd + 2, Math.max(lineEnd + 2, headersEnd)))
    const disposition = headerParams(headers.get("content-disposition") ?? "")
    const name = disposition.get("name")
    if (name === undefined || name === "") return undefined
    parts.push({
      name,
      filename: disposition.get("filename"),
      contentType: headers.get("content-type"),
      body: body.subarray(headersEnd + 4, end)
    })
    position = end + delimiter.length
  }
  return parts
}

/** How a file part shows in `params` and the call log. */
const partSummary = (part: FilePart): Json => ({
  file_name: part.file_name,
  mime_type: part.mime_type,
  file_size: part.bytes.length,
  sha256: part.sha256
})

/** A multipart body's fields as strings and its file parts as bytes. */
const parseMultipart = (body: Buffer, header: string, params: Record<string, unknown>): ParsedParams => {
  const boundary = boundaryOf(header)
  const parts = boundary === undefined ? undefined : multipartParts(body, boundary)
  if (parts === undefined) return { _tag: "Failure", failure: badRequest("can't parse multipart/form-data") }
  const files = new Map<string, FilePart>()
  for (const part of parts) {
    if (part.filename === undefined) {
      params[part.name] = part.body.toString("utf8")
      continue
    }
    const file: FilePart = {
      file_name: part.filename,
      mime_type: part.contentType ?? "application/octet-stream",
      bytes: part.body,
      sha256: createHash("sha256").update(part.body).digest("hex")
    }
    files.set(part.name, file)
    params[part.name] = partSummary(file)
  }
  return { _tag: "Params", params, files }
}

/** A request's parameters: `initial` (the query string) overridden by a JSON, urlencoded or multipart body. */
export const parseBody = (body: Buffer, header: string, initial: Record<string, unknown> = {}): ParsedParams => {
  const params = initial
  const done = (params: Params): ParsedParams => ({ _tag: "Params", params, files: noFiles })
  if (body.length === 0) return done(params)
  const contentType = header.toLowerCase()
  if (contentType.startsWith("application/json")) {
    const parsed = asObject(body.toString("utf8"))
    return parsed === undefined
      ? { _tag: "Failure", failure: badRequest("can't parse JSON object") }
      : done({ ...params, ...parsed })
  }
  if (contentType.startsWith("application/x-www-form-urlencoded")) {
    return done({ ...params, ...Object.fromEntries(new URLSearchParams(body.toString("utf8"))) })
  }
  if (contentType.startsWith("multipart/form-data")) return parseMultipart(body, header, params)
  return done(params)
}
