import type { IncomingMessage, ServerResponse } from "node:http"
import type { Handler } from "./NodeHandler.js"

// The host types are structural (the parts of express, fastify and koa an adapter touches), so Botrelay
// depends on none of these frameworks. Each adapter leaves requests outside the instance's prefix to the host.

/** node:http and node:https: `createServer(Adapters.http(instance.handler))`. */
export const http = (handler: Handler) => (req: IncomingMessage, res: ServerResponse): void => handler(req, res)

/** The part of an express request an adapter reads. */
export interface ExpressRequest extends IncomingMessage {
  /** The URL before express removed the mount path. */
  readonly originalUrl?: string
}

/**
 * Express 4 and 5: `app.use(Adapters.express(instance.handler))`, or `app.use("/botrelay", ...)` with
 * the instance's prefix `/botrelay` (the prefix is matched against the full URL). Mount it before body
 * parsers; when one ran first, JSON and form bodies are written back from `req.body`.
 */
export const express = (handler: Handler) =>
(req: ExpressRequest, res: ServerResponse, next: (error?: unknown) => void): void => {
  const url = req.url
  req.url = req.originalUrl ?? url
  handler(req, res, (error) => {
    req.url = url
    next(error)
  })
}

/** The part of a fastify request an adapter reads. */
export interface FastifyRequest {
  readonly raw: IncomingMessage
}

/** The part of a fastify reply an adapter uses. */
export interface FastifyReply {
  readonly raw: ServerResponse
  hijack(): unknown
}

/**
 * Fastify 4 and 5, as an `onRequest` hook, which runs before fastify reads the body:
 * `app.addHook("onRequest", Adapters.fastify(instance.handler))`. Requests under the prefix are
 * taken from fastify (`reply.hijack()`); others go on to its routes.
 */
export const fastify = (handler: Handler) =>
(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
  if (!handler.handles(request.raw.url ?? "/")) return done()
  reply.hijack()
  handler(request.raw, reply.raw)
}

/** The part of a koa context an adapter uses. */
export interface KoaContext {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly request: { readonly body?: unknown }
  respond?: boolean
}

/**
 * Koa 2 and 3: `app.use(Adapters.koa(instance.handler))`. The response is written by Botrelay
 * (`ctx.respond = false`); the middleware settles when it is finished. A body koa-bodyparser read
 * first is written back from `ctx.request.body`.
 */
export const koa = (handler: Handler) => (ctx: KoaContext, next: () => Promise<unknown>): Promise<unknown> => {
  if (!handler.handles(ctx.req.url ?? "/")) return next()
  ctx.respond = false
  if (ctx.req.readableEnded && (ctx.req as { body?: unknown }).body === undefined) {
    Object.assign(ctx.req, { body: ctx.request.body })
  }
  return new Promise<void>((resolve) => {
    ctx.res.once("close", () => resolve())
    handler(ctx.req, ctx.res)
  })
}
