import { parseMultipart as multipartParts } from "@remix-run/multipart-parser"
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

const unparsable: ParsedParams = { _tag: "Failure", failure: badRequest("can't parse multipart/form-data") }

const boundaryOf = (header: string): string | undefined => {
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(header)
  return match?.[1] ?? match?.[2]
}

const bytesOf = (content: ReadonlyArray<Uint8Array>): Buffer =>
  content.length === 1
    ? Buffer.from(content[0]!.buffer, content[0]!.byteOffset, content[0]!.byteLength)
    : Buffer.concat(content)

/** How a file part shows in `params` and the call log. */
const partSummary = (part: FilePart): Json => ({
  file_name: part.file_name,
  mime_type: part.mime_type,
  file_size: part.bytes.length,
  sha256: part.sha256
})

/**
 * A multipart body's fields as strings and its file parts as bytes; a part with a `filename` is a file, as
 * Telegram decides. Anything before the first boundary is skipped; a part without a name, or a body the
 * parser refuses, fails the request.
 */
const parseMultipart = (body: Buffer, header: string, params: Record<string, unknown>): ParsedParams => {
  const boundary = boundaryOf(header)
  const first = boundary === undefined ? -1 : body.indexOf(`--${boundary}`)
  if (boundary === undefined || first < 0) return unparsable
  const files = new Map<string, FilePart>()
  try {
    const parts = multipartParts(body.subarray(first), {
      boundary,
      maxHeaderSize: Number.POSITIVE_INFINITY,
      maxFileSize: Number.POSITIVE_INFINITY,
      maxTotalSize: Number.POSITIVE_INFINITY,
      maxParts: Number.POSITIVE_INFINITY
    })
    for (const part of parts) {
      const name = part.name
      if (name === undefined || name === "") return unparsable
      const bytes = bytesOf(part.content)
      const filename = part.filename
      if (filename === undefined) {
        params[name] = bytes.toString("utf8")
        continue
      }
      const file: FilePart = {
        file_name: filename,
        mime_type: part.headers["content-type"] ?? "application/octet-stream",
        bytes,
        sha256: createHash("sha256").update(bytes).digest("hex")
      }
      files.set(name, file)
      params[name] = partSummary(file)
    }
  } catch {
    return unparsable
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
