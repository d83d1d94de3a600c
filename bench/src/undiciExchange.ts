/**
 * `HttpExchange` on undici (an `Agent`'s `dispatch`, no streams): the contender the http suite measures
 * against `NodeHttpExchange` on `Http1Client`. It keeps that client's contract: the timeout covers the
 * whole call, `maxBytes` stops the read, errors carry codes and never the URL, and calls with the
 * `"public"` address policy go through an agent of their own whose connector's `lookup` keeps only
 * allowed addresses (an IP-literal host is checked before connecting).
 */
import * as Dns from "node:dns"
import type * as Net from "node:net"
import { isIP } from "node:net"
import { HttpExchange } from "@botrelay/telegram"
import { Http1Client } from "@botrelay/node"
import { Duration, Effect } from "effect"
import { Agent, type Dispatcher } from "undici"

class AddressRefused extends Error {
  readonly code = HttpExchange.addressNotAllowedCode
}

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

const notHttp = new HttpExchange.HttpExchangeError({
  reason: "Request",
  code: undefined,
  description: "the method, path or a header cannot be sent in HTTP/1.1"
})

const skipped = new Set(["host", "content-length", "transfer-encoding", "connection"])

const decoded = (part: string) => {
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}

export interface Client {
  readonly request: (
    request: HttpExchange.Request,
    callback: (failure: HttpExchange.HttpExchangeError | undefined, answer: HttpExchange.Answer | undefined) => void
  ) => () => void
  readonly close: () => Promise<void>
}

export const makeClient = (options: {
  readonly allowAddress?: ((address: string) => boolean) | undefined
  readonly connections?: number | undefined
} = {}): Client => {
  const allowAddress = options.allowAddress ?? Http1Client.publicAndForeign
  const agentOptions = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 30_000, connections: options.connections ?? null }
  const anyAgent = new Agent(agentOptions)
  const publicAgent = new Agent({
    ...agentOptions,
    connect: { lookup: guardedLookup(allowAddress, Dns.lookup) }
  })

  const request: Client["request"] = (request, callback) => {
    let url: URL
    try {
      url = new URL(request.url)
    } catch (cause) {
      callback(HttpExchange.invalidUrl(cause), undefined)
      return () => {}
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      callback(HttpExchange.invalidUrl(undefined), undefined)
      return () => {}
    }
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
    if (request.addresses === "public" && isIP(host) !== 0 && !allowAddress(host)) {
      callback(HttpExchange.addressNotAllowed, undefined)
      return () => {}
    }
    const headers: Record<string, string> = {}
    for (const name in request.headers) if (!skipped.has(name)) headers[name] = request.headers[name]!
    if ((url.username !== "" || url.password !== "") && headers["authorization"] === undefined) {
      const credentials = `${decoded(url.username)}:${decoded(url.password)}`
      headers["authorization"] = `Basic ${Buffer.from(credentials).toString("base64")}`
    }
    const body = typeof request.body === "string" ? Buffer.from(request.body) : request.body
    const maxBytes = request.maxBytes ?? Infinity
    let settled = false
    let controller: Dispatcher.DispatchController | undefined
    let timer: ReturnType<typeof setTimeout> | undefined
    let status = 0
    let answerHeaders: Record<string, string> = {}
    const parts: Array<Buffer> = []
    let size = 0
    const done = (failure: HttpExchange.HttpExchangeError | undefined, answer: HttpExchange.Answer | undefined) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      callback(failure, answer)
    }
    /** Ends the call with the failure and drops its connection. */
    const stop = (failure: HttpExchange.HttpExchangeError) => {
      done(failure, undefined)
      controller?.abort(failure)
    }
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (started) => {
        controller = started
        if (settled) started.abort(new Error("cancelled"))
      },
      onResponseStart: (_, statusCode, headers) => {
        status = statusCode
        const flat: Record<string, string> = {}
        for (const name in headers) {
          const value = headers[name]
          if (value !== undefined) flat[name] = typeof value === "string" ? value : value.join(", ")
        }
        answerHeaders = flat
      },
      onResponseData: (_, chunk) => {
        size += chunk.length
        if (size > maxBytes) return stop(HttpExchange.tooLarge(status, maxBytes))
        parts.push(chunk)
      },
      onResponseEnd: () =>
        done(undefined, {
          status,
          headers: answerHeaders,
          body: parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)
        }),
      onResponseError: (_, error) => {
        if (settled) return
        const code = HttpExchange.errorCode(error)
        if (code === HttpExchange.addressNotAllowedCode) return done(HttpExchange.addressNotAllowed, undefined)
        if (code === "UND_ERR_INVALID_ARG") return done(notHttp, undefined)
        done(status === 0 ? HttpExchange.requestFailed(error) : HttpExchange.answerFailed(status, error), undefined)
      }
    }
    if (request.timeout !== undefined) {
      const timeout = request.timeout
      timer = setTimeout(() => stop(HttpExchange.timedOut(timeout)), Duration.toMillis(timeout))
    }
    const withoutBody = body === undefined && (request.method === "GET" || request.method === "HEAD")
    try {
      ;(request.addresses === "public" ? publicAgent : anyAgent).dispatch({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers,
        body: withoutBody ? null : body ?? Buffer.alloc(0),
        headersTimeout: 0,
        bodyTimeout: 0
      }, handler)
    } catch (error) {
      done(HttpExchange.errorCode(error) === "UND_ERR_INVALID_ARG" ? notHttp : HttpExchange.requestFailed(error), undefined)
    }
    return () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      controller?.abort(new Error("cancelled"))
    }
  }

  return { request, close: () => Promise.all([anyAgent.destroy(), publicAgent.destroy()]).then(() => {}) }
}

/** `HttpExchange` over the client; the call ends (its connection dropped) when its fiber is interrupted. */
export const fromClient = (client: Client): HttpExchange.Service => ({
  exchange: (request) =>
    Effect.async<HttpExchange.Answer, HttpExchange.HttpExchangeError>((resume) => {
      const cancel = client.request(
        request,
        (failure, answer) => resume(failure === undefined ? Effect.succeed(answer!) : Effect.fail(failure))
      )
      return Effect.sync(cancel)
    })
})
