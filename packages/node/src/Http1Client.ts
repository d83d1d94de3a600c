import * as Dns from "node:dns"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Tls from "node:tls"
import { HttpExchange, IpAddress } from "@botrelay/telegram"
import { Duration } from "effect"
import { type Origin, type Target, targetOf } from "./Http1Target.js"

/** The answer read whole: status, headers (lower-case names, repeated ones joined by ", ") and body. */
export interface Answer extends HttpExchange.Answer {
  readonly body: Buffer
}

/** Called once with the answer or the failure, unless the call was cancelled first. */
export type Callback = (failure: HttpExchange.HttpExchangeError | undefined, answer: Answer | undefined) => void

/** Sends calls over keep-alive connections and reads their answers whole. */
export interface Client {
  /**
   * Sends the call; the returned function cancels it (and drops its connection) without calling back.
   * `host`, `content-length`, `connection` and `transfer-encoding` headers are set here.
   */
  readonly request: (request: HttpExchange.Request, callback: Callback) => () => void
  /** Closes every connection, busy or idle. */
  readonly close: () => void
}

/** The longest answer head (status line and headers) read. */
const maxHeadBytes = 64 * 1024

/** How long a connection may wait in the pool for its next call, unless the server's `keep-alive` says less. */
const idleTimeout = 30_000

/** The most idle connections kept per origin; more are closed. */
const maxIdle = 256

const tokenPattern = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const valuePattern = /^[\t\x20-\x7e\x80-\xff]*$/
const targetPattern = /^[\x21-\x7e]+$/
const highBytePattern = /[\x80-\xff]/
const digits = /^\d{1,15}$/
const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/
const chunkSizeLine = /^([0-9A-Fa-f]{1,15})(?:[ \t]*;[^\r\n]*)?[ \t]*$/

const notHttp = new HttpExchange.HttpExchangeError({
  reason: "Request",
  code: undefined,
  description: "the method, path or a header cannot be sent in HTTP/1.1"
})

const empty = Buffer.alloc(0)

const hangUp = (): Error => Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })

const protocolError = (what: string): Error => Object.assign(new Error(what), { code: "HPE_INVALID_ANSWER" })

/** A lookup's failure when every address it found is refused by the call's policy. */
class AddressRefused extends Error {
  readonly code = HttpExchange.addressNotAllowedCode
}

/** The addresses of this host's network interfaces, in canonical form. */
const ownAddresses = (): ReadonlySet<string> => {
  const own = new Set<string>()
  for (const entries of Object.values(Os.networkInterfaces())) {
    for (const entry of entries ?? []) {
      const address = IpAddress.canonical(entry.address)
      if (address !== undefined) own.add(address)
    }
  }
  return own
}

/**
 * Whether a call with the `"public"` address policy may connect to the address: a public one
 * (`IpAddress.isPublic`) that none of this host's network interfaces has.
 */
export const publicAndForeign = (address: string): boolean =>
  IpAddress.isPublic(address) && !ownAddresses().has(IpAddress.canonical(address)!)

/**
 * A `lookup` for net/tls connect that resolves with `resolve` and keeps only the addresses `allow`
 * accepts; none left fails the connection with an `AddressRefused`.
 */
const guardedLookup = (allow: (address: string) => boolean, resolve: Net.LookupFunction): Net.LookupFunction =>
(hostname, options, callback) =>
  resolve(hostname, { ...options, all: true }, (error, found) => {
    if (error !== null) return callback(error, "", 0)
    const addresses = typeof found === "string" ? [{ address: found, family: 0 }] : found
    const allowed = addresses.filter((a) => allow(a.address))
    if (allowed.length === 0) return callback(new AddressRefused("the address is not allowed"), "", 0)
    if (options.all === true) callback(null, allowed)
    else callback(null, allowed[0]!.address, allowed[0]!.family)
  })

/** How the answer's body ends. */
type Framing =
  | { readonly _tag: "None" }
  | { readonly _tag: "Length"; readonly length: number }
  | { readonly _tag: "Chunked" }
  | { readonly _tag: "Close" }

interface Head {
  readonly status: number
  readonly headers: Record<string, string>
  readonly framing: Framing
  /** How long the connection may wait for its next call once the answer is read; 0 closes it. */
  readonly keepAlive: number
}

/** How long the server keeps an idle connection, from `keep-alive: timeout=5`, less a second for the way. */
const keptFor = (hint: string | undefined) => {
  const seconds = hint === undefined ? undefined : /(?:^|[,\s])timeout\s*=\s*(\d+)/i.exec(hint)?.[1]
  return seconds === undefined ? idleTimeout : Math.min(idleTimeout, Number(seconds) * 1000 - 1000)
}

/** Parses a head (without its final blank line); a string says what is wrong with it. */
const parseHead = (text: string, method: string): Head | string => {
  const lines = text.split("\r\n")
  const status = statusLine.exec(lines[0]!)
  if (status === null) return "the status line is not HTTP/1.x"
  const headers = Object.create(null) as Record<string, string>
  let last: string | undefined
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!
    if (line.startsWith(" ") || line.startsWith("\t")) {
      if (last === undefined) return "a header line is folded without a header"
      headers[last] = `${headers[last]} ${line.trim()}`
      continue
    }
    const colon = line.indexOf(":")
    if (colon <= 0) return "a header line has no name"
    const name = line.slice(0, colon).toLowerCase()
    if (!tokenPattern.test(name)) return "a header name is not a token"
    const value = line.slice(colon + 1).trim()
    if (!valuePattern.test(value)) return "a header value has control characters"
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
    last = name
  }
  const code = Number(status[2])
  const http11 = status[1] === "1"
  const connection = (headers["connection"] ?? "").toLowerCase()
  const reusable = http11
    ? !/(?:^|,)\s*close\s*(?:,|$)/.test(connection)
    : /(?:^|,)\s*keep-alive\s*(?:,|$)/.test(connection)
  let keepAlive = reusable ? Math.max(0, keptFor(headers["keep-alive"])) : 0
  let framing: Framing
  const encoding = headers["transfer-encoding"]
  const length = headers["content-length"]
  if (method === "HEAD" || code === 204 || code === 304 || code < 200) {
    framing = { _tag: "None" }
  } else if (encoding !== undefined) {
    if (/(?:^|,)\s*chunked\s*$/i.test(encoding)) framing = { _tag: "Chunked" }
    else {
      framing = { _tag: "Close" }
      keepAlive = 0
    }
  } else if (length !== undefined && digits.test(length)) {
    framing = { _tag: "Length", length: Number(length) }
  } else if (length !== undefined) {
    const values = new Set(length.split(",").map((v) => v.trim()))
    const only = [...values][0]!
    if (values.size !== 1 || !digits.test(only)) return "the content-length is not a number"
    framing = { _tag: "Length", length: Number(only) }
  } else {
    framing = { _tag: "Close" }
    keepAlive = 0
  }
  return { status: code, headers, framing, keepAlive }
}

/** A call on its connection, from the first byte sent to the last byte read. */
interface Exchange {
  readonly method: string
  readonly maxBytes: number
  readonly done: (failure: HttpExchange.HttpExchangeError | undefined, answer: Answer | undefined) => void
  /** Bytes read and not yet taken. */
  buffer: Buffer
  head: Head | undefined
  body: Array<Buffer>
  size: number
  /** Where a chunked body is: at a size line, in a chunk's data, at the CRLF after it, or in the trailers. */
  chunk: "size" | "data" | "end" | "trailers"
  /** Bytes of the current chunk still to read. */
  chunkLeft: number
}

interface Connection {
  readonly origin: Origin
  readonly socket: Net.Socket
  exchange: Exchange | undefined
  /** Whether the connection waits in the pool unreferenced, closed after its keep-alive time when no call takes it. */
  parked: boolean
  /** How long the server keeps the connection once idle. */
  keepAlive: number
  /** The last final head read on the connection, its bytes and the method it answered: a server repeats its heads. */
  last: { readonly bytes: Buffer; readonly method: string; readonly head: Head } | undefined
}

/**
 * An HTTP/1.1 client on node:net and node:tls for calls read whole: one request at a time per
 * connection, connections kept alive per origin (idle ones closed after 30 s or before the server's
 * keep-alive timeout, at most 256 of them), TLS sessions resumed, bodies framed by content-length,
 * chunked encoding or the connection's end, informational answers skipped. Calls with the `"public"`
 * address policy check an IP-literal host before connecting and a host name's resolved addresses in
 * the connection's `lookup`, and never share connections with calls without it. It does without
 * node:http's streams and agents, which cost more than the rest of a proxied call.
 */
export const make = (options: {
  /** Extra options for https connections, e.g. `ca` for a Bot API server with its own certificate authority. */
  readonly tls?: Tls.ConnectionOptions | undefined
  /** Which resolved addresses calls with the `"public"` address policy may connect to; `publicAndForeign` by default. */
  readonly allowAddress?: ((address: string) => boolean) | undefined
  /** How host names are resolved; `dns.lookup` by default. */
  readonly lookup?: Net.LookupFunction | undefined
} = {}): Client => {
  const allowAddress = options.allowAddress ?? publicAndForeign
  const publicLookup = guardedLookup(allowAddress, options.lookup ?? Dns.lookup)
  const idle = new Map<string, Array<Connection>>()
  const all = new Set<Connection>()
  /** The latest TLS session of each origin, so new connections resume it instead of a full handshake. */
  const sessions = new Map<string, Buffer>()

  const forget = (connection: Connection) => {
    all.delete(connection)
    const pool = idle.get(connection.origin.key)
    const at = pool === undefined ? -1 : pool.indexOf(connection)
    if (at === -1) return
    pool!.splice(at, 1)
    if (pool!.length === 0) idle.delete(connection.origin.key)
  }

  /** Connections released in this event-loop turn: those still idle after it are parked. */
  let released: Array<Connection> = []
  const park = () => {
    const connections = released
    released = []
    for (const connection of connections) {
      if (connection.parked || connection.exchange !== undefined || connection.socket.destroyed) continue
      connection.parked = true
      connection.socket.setTimeout(connection.keepAlive)
      connection.socket.unref()
    }
  }

  /**
   * Puts the connection in its origin's pool, unless the pool is full. It is parked (its keep-alive timer set,
   * its socket unreferenced) only after this turn, when no call took it again: a busy connection goes from one
   * call to the next without timer changes.
   */
  const release = (connection: Connection, keepAlive: number) => {
    connection.exchange = undefined
    const pool = idle.get(connection.origin.key)
    if (connection.socket.destroyed || (pool?.length ?? 0) >= maxIdle) return connection.socket.destroy()
    connection.keepAlive = keepAlive
    if (released.push(connection) === 1) setImmediate(park)
    if (pool === undefined) idle.set(connection.origin.key, [connection])
    else pool.push(connection)
  }

  /** The most recently used idle connection to the origin that is still open. */
  const pooled = (origin: Origin): Connection | undefined => {
    const pool = idle.get(origin.key)
    if (pool === undefined) return undefined
    let found = pool.pop()
    while (found !== undefined && found.socket.destroyed) found = pool.pop()
    if (pool.length === 0) idle.delete(origin.key)
    return found
  }

  const fail = (connection: Connection, failure: HttpExchange.HttpExchangeError) => {
    const exchange = connection.exchange
    connection.exchange = undefined
    connection.socket.destroy()
    exchange?.done(failure, undefined)
  }

  /** The connection broke (`error`) or ended: an answer framed by the end is complete, any other call fails. */
  const ended = (connection: Connection, error: Error | undefined) => {
    const exchange = connection.exchange
    if (exchange === undefined) return
    const head = exchange.head
    if (error instanceof AddressRefused) return fail(connection, HttpExchange.addressNotAllowed)
    if (head === undefined) return fail(connection, HttpExchange.requestFailed(error ?? hangUp()))
    if (head.framing._tag === "Close" && error === undefined) return finish(connection, exchange)
    fail(connection, HttpExchange.answerFailed(head.status, error ?? hangUp()))
  }

  const finish = (connection: Connection, exchange: Exchange) => {
    const head = exchange.head!
    const reusable = head.keepAlive > 0 && exchange.buffer.length === 0 && connection.socket.writableLength === 0
    const body = exchange.body.length === 1 ? exchange.body[0]! : Buffer.concat(exchange.body, exchange.size)
    if (reusable) release(connection, head.keepAlive)
    else {
      connection.exchange = undefined
      connection.socket.destroy()
    }
    exchange.done(undefined, { status: head.status, headers: head.headers, body })
  }

  /** Takes body bytes; false when the call failed on them. */
  const take = (connection: Connection, exchange: Exchange, bytes: Buffer): boolean => {
    if (bytes.length === 0) return true
    exchange.size += bytes.length
    if (exchange.size > exchange.maxBytes) {
      fail(connection, HttpExchange.tooLarge(exchange.head!.status, exchange.maxBytes))
      return false
    }
    exchange.body.push(bytes)
    return true
  }

  /** Reads chunked body bytes from the buffer: "done" once the body and its trailers are in, or what is wrong. */
  const readChunks = (connection: Connection, exchange: Exchange): "more" | "done" | "failed" => {
    let buffer = exchange.buffer
    for (;;) {
      if (exchange.chunk === "data") {
        if (buffer.length === 0) break
        const part = buffer.subarray(0, Math.min(exchange.chunkLeft, buffer.length))
        buffer = buffer.subarray(part.length)
        if (!take(connection, exchange, part)) return "failed"
        exchange.chunkLeft -= part.length
        if (exchange.chunkLeft === 0) exchange.chunk = "end"
        continue
      }
      const end = buffer.indexOf("\r\n")
      if (end === -1) {
        if (buffer.length <= maxHeadBytes) break
        return broken(connection, exchange, "a chunk line is too long")
      }
      const line = buffer.toString("latin1", 0, end)
      buffer = buffer.subarray(end + 2)
      if (exchange.chunk === "end") {
        if (line !== "") return broken(connection, exchange, "a chunk does not end with CRLF")
        exchange.chunk = "size"
      } else if (exchange.chunk === "trailers") {
        if (line === "") {
          exchange.buffer = buffer
          return "done"
        }
      } else {
        const size = chunkSizeLine.exec(line)
        if (size === null) return broken(connection, exchange, "a chunk size is not hexadecimal")
        exchange.chunkLeft = parseInt(size[1]!, 16)
        exchange.chunk = exchange.chunkLeft === 0 ? "trailers" : "data"
      }
    }
    exchange.buffer = buffer
    return "more"
  }

  const broken = (connection: Connection, exchange: Exchange, what: string) => {
    fail(connection, HttpExchange.answerFailed(exchange.head?.status ?? 0, protocolError(what)))
    return "failed" as const
  }

  const onData = (connection: Connection, chunk: Buffer) => {
    const exchange = connection.exchange
    if (exchange === undefined) return connection.socket.destroy()
    exchange.buffer = exchange.buffer.length === 0 ? chunk : Buffer.concat([exchange.buffer, chunk])
    while (exchange.head === undefined) {
      let buffer = exchange.buffer
      while (buffer.length >= 2 && buffer[0] === 13 && buffer[1] === 10) buffer = buffer.subarray(2)
      exchange.buffer = buffer
      const end = buffer.indexOf("\r\n\r\n")
      if (end === -1) {
        if (buffer.length > maxHeadBytes) {
          fail(connection, HttpExchange.requestFailed(protocolError("the head is too long")))
        }
        return
      }
      const last = connection.last
      exchange.buffer = buffer.subarray(end + 4)
      if (
        last !== undefined && last.bytes.length === end && last.method === exchange.method &&
        buffer.compare(last.bytes, 0, end, 0, end) === 0
      ) {
        exchange.head = last.head
        break
      }
      const head = parseHead(buffer.toString("latin1", 0, end), exchange.method)
      if (typeof head === "string") return fail(connection, HttpExchange.requestFailed(protocolError(head)))
      if (head.status === 101) {
        return fail(connection, HttpExchange.requestFailed(protocolError("the server switched protocols")))
      }
      if (head.status >= 100 && head.status < 200) continue
      exchange.head = head
      connection.last = { bytes: Buffer.from(buffer.subarray(0, end)), method: exchange.method, head }
    }
    const framing = exchange.head.framing
    switch (framing._tag) {
      case "None":
        return finish(connection, exchange)
      case "Length": {
        const buffer = exchange.buffer
        const wanted = framing.length - exchange.size
        const part = buffer.length <= wanted ? buffer : buffer.subarray(0, wanted)
        exchange.buffer = buffer.subarray(part.length)
        if (!take(connection, exchange, part)) return
        if (exchange.size === framing.length) finish(connection, exchange)
        return
      }
      case "Chunked":
        if (readChunks(connection, exchange) === "done") finish(connection, exchange)
        return
      case "Close": {
        const buffer = exchange.buffer
        exchange.buffer = empty
        take(connection, exchange, buffer)
      }
    }
  }

  const connect = (origin: Origin): Connection => {
    const lookup = origin.addresses === "public" ? publicLookup : options.lookup
    const socket = origin.secure
      ? Tls.connect({
        ...options.tls,
        host: origin.host,
        port: origin.port,
        servername: Net.isIP(origin.host) === 0 ? origin.host : undefined,
        ALPNProtocols: ["http/1.1"],
        session: sessions.get(origin.key),
        ...(lookup === undefined ? {} : { lookup })
      }).on("session", (session: Buffer) => sessions.set(origin.key, session))
      : Net.connect({ host: origin.host, port: origin.port, ...(lookup === undefined ? {} : { lookup }) })
    socket.setNoDelay(true)
    socket.setKeepAlive(true, idleTimeout)
    const connection: Connection = { origin, socket, exchange: undefined, parked: false, keepAlive: 0, last: undefined }
    all.add(connection)
    socket.on("data", (chunk: Buffer) => onData(connection, chunk))
    socket.on("timeout", () => {
      if (connection.exchange === undefined) socket.destroy()
    })
    socket.on("error", (error: Error) => ended(connection, error))
    socket.on("end", () => {
      ended(connection, undefined)
      socket.destroy()
    })
    socket.on("close", () => {
      ended(connection, undefined)
      forget(connection)
    })
    return connection
  }

  /** The header lines of a headers object (`null` when one is not valid), checked once per object. */
  const headerLines = new WeakMap<HttpExchange.Request["headers"], string | null>()
  const linesOf = (headers: HttpExchange.Request["headers"]): string | null => {
    let lines = headerLines.get(headers)
    if (lines !== undefined) return lines
    lines = ""
    for (const name in headers) {
      const value = headers[name]!
      if (!tokenPattern.test(name) || !valuePattern.test(value)) {
        lines = null
        break
      }
      if (name !== "host" && name !== "content-length" && name !== "transfer-encoding" && name !== "connection") {
        lines += `${name}: ${value}\r\n`
      }
    }
    headerLines.set(headers, lines)
    return lines
  }

  const headOf = (request: HttpExchange.Request, target: Target, length: number | undefined) => {
    if (!tokenPattern.test(request.method) || !targetPattern.test(target.path)) return undefined
    const lines = linesOf(request.headers)
    if (lines === null) return undefined
    let head = `${request.method} ${target.path} HTTP/1.1\r\nhost: ${target.origin.authority}\r\n`
    if (target.authorization !== undefined && request.headers["authorization"] === undefined) {
      head += `authorization: ${target.authorization}\r\n`
    }
    head += lines
    if (length !== undefined) head += `content-length: ${length}\r\n`
    return `${head}\r\n`
  }

  const request = (request: HttpExchange.Request, callback: Callback): () => void => {
    const target = targetOf(request.url, request.addresses)
    if (target instanceof HttpExchange.HttpExchangeError) {
      callback(target, undefined)
      return () => {}
    }
    const origin = target.origin
    if (origin.addresses === "public" && Net.isIP(origin.host) !== 0 && !allowAddress(origin.host)) {
      callback(HttpExchange.addressNotAllowed, undefined)
      return () => {}
    }
    const body = request.body
    const withoutBody = body === undefined && (request.method === "GET" || request.method === "HEAD")
    const length = body === undefined ? 0 : typeof body === "string" ? Buffer.byteLength(body) : body.length
    const head = headOf(request, target, withoutBody ? undefined : length)
    if (head === undefined) {
      callback(notHttp, undefined)
      return () => {}
    }
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const exchange: Exchange = {
      method: request.method,
      maxBytes: request.maxBytes ?? Infinity,
      done: (failure, answer) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        callback(failure, answer)
      },
      buffer: empty,
      head: undefined,
      body: [],
      size: 0,
      chunk: "size",
      chunkLeft: 0
    }
    const connection = pooled(origin) ?? connect(origin)
    connection.exchange = exchange
    if (connection.parked) {
      connection.parked = false
      connection.socket.setTimeout(0)
      connection.socket.ref()
    }
    if (request.timeout !== undefined) {
      const timeout = request.timeout
      timer = setTimeout(() => {
        if (connection.exchange === exchange) fail(connection, HttpExchange.timedOut(timeout))
      }, Duration.toMillis(timeout))
    }
    const socket = connection.socket
    if (body === undefined || length === 0) socket.write(head, "latin1")
    else if (typeof body === "string" && length <= 16 * 1024 && !highBytePattern.test(head)) socket.write(head + body)
    else if (typeof body !== "string" && length <= 16 * 1024) {
      const whole = Buffer.allocUnsafe(head.length + length)
      whole.write(head, 0, "latin1")
      whole.set(body, head.length)
      socket.write(whole)
    } else {
      socket.cork()
      socket.write(head, "latin1")
      socket.write(body)
      socket.uncork()
    }
    return () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (connection.exchange === exchange) {
        connection.exchange = undefined
        connection.socket.destroy()
      }
    }
  }

  const close = () => {
    for (const connection of all) {
      const exchange = connection.exchange
      connection.exchange = undefined
      connection.socket.destroy()
      exchange?.done(HttpExchange.requestFailed(hangUp()), undefined)
    }
    all.clear()
    idle.clear()
  }

  return { request, close }
}
