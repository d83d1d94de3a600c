import { ApiKeys, type Errors, StoreLock } from "@botrelay/core"
import { Context, Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import * as Botrelay from "./Botrelay.js"
import * as NodeHandler from "./NodeHandler.js"

/** How an embedded instance is set up: `Botrelay.Options`, plus where it is mounted and its first key. */
export interface Options extends Botrelay.Options {
  /** The path the handler serves under, e.g. `/botrelay`; requests outside it go to `next`. None by default. */
  readonly prefix?: string | undefined
  /** The web console's build folder, served under the prefix; `@botrelay/console`'s by default, false for none. */
  readonly console?: string | false | undefined
  /** Registered as an admin API key when the instance starts (`brk_` + 43 base64url characters). */
  readonly adminKey?: string | Redacted.Redacted<string> | undefined
  /** The least severe log level written; `"Info"` by default, `"None"` for silence. */
  readonly logLevel?: LogLevel.Literal | undefined
}

/** The instance's request handler. */
export class Handler extends Context.Tag("@botrelay/node/Instance/Handler")<Handler, NodeHandler.Handler>() {}

/** Registers the configured admin key, under the storage-wide lock (instances may share a PostgreSQL database). */
const registerAdminKey = (adminKey: Options["adminKey"]) =>
  adminKey === undefined ? Layer.empty : Layer.effectDiscard(
    Effect.flatMap(StoreLock.StoreLock, (lock) =>
      lock.exclusive(
        "bootstrap",
        Effect.flatMap(ApiKeys.ApiKeys, (keys) =>
          keys.ensureAdmin(typeof adminKey === "string" ? Redacted.make(adminKey) : adminKey, "admin (embedded)"))
      ))
  )

/** Everything an instance runs, with its handler: storage, services, the runtime and the HTTP surface. */
export const layer = (
  options: Options
): Layer.Layer<Botrelay.Services | Handler, Botrelay.StorageOpenError | Errors.InvalidInput> =>
  Layer.scoped(Handler, NodeHandler.make({ prefix: options.prefix, console: options.console })).pipe(
    Layer.merge(NodeHandler.endHeldRequestsOnStop),
    Layer.provide(NodeHandler.proxyLayer(options.telegramApi ?? Botrelay.telegramApi)),
    Layer.merge(registerAdminKey(options.adminKey)),
    Layer.provideMerge(Botrelay.servicesLayer(options)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.fromLiteral(options.logLevel ?? "Info")))
  )

/** A running instance: its handler, the Effect runtime of its services, and how to stop it. */
export interface Instance {
  /** Serves `/api`, `/tgapi`, the webhook ingress and the console under the prefix; see the adapters for frameworks. */
  readonly handler: NodeHandler.Handler
  /** Runs effects on the instance's services (`Bots`, `Routes`, `Messages`...). */
  readonly runtime: ManagedRuntime.ManagedRuntime<Botrelay.Services | Handler, unknown>
  /** Stops polling and deliveries, answers held long polls and closes storage; safe to call twice. */
  readonly dispose: () => Promise<void>
}

/** Starts an instance: opens storage (running migrations), starts the runtime and builds the handler. */
export const create = async (options: Options): Promise<Instance> => {
  const runtime = ManagedRuntime.make(layer(options))
  try {
    const handler = await runtime.runPromise(Handler)
    return { handler, runtime, dispose: () => runtime.dispose() }
  } catch (error) {
    await runtime.dispose()
    throw error
  }
}
