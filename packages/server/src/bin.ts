#!/usr/bin/env node
import { parseArgs } from "node:util"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { ApiKeys } from "@botrelay/core"
import { Effect, Layer } from "effect"
import * as Config from "./Config.js"
import * as Main from "./Main.js"

const usage = `Usage:
  botrelay [serve] [options]          start the server
  botrelay keys create --name NAME [--role admin|operator] [--bots 1,2] [options]
                                      mint an API key and print it

Options (each also read from its environment variable):
${
  Object.values(Config.settings).map((s) =>
    `  --${s.flag.padEnd(14)} ${s.env.padEnd(24)} default: ${s.default ?? "(none)"}`
  ).join("\n")
}

In production run \`node packages/server/dist/bin.js\` (or the botrelay bin) directly:
pnpm does not pass SIGTERM on to its child.`

const fail = (message: string): never => {
  process.stderr.write(`botrelay: ${message}\n`)
  process.exit(2)
}

/** Shutdown drains in-flight work; whatever still runs after this long is cut short. */
const shutdownGrace = 10_000

const serve = (args: ReadonlyArray<string>) => {
  const config = Config.load(args)
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () =>
      setTimeout(() => {
        process.stderr.write(`botrelay: still stopping ${shutdownGrace / 1000} s after ${signal}; exiting\n`)
        process.exit(0)
      }, shutdownGrace).unref())
  }
  Layer.launch(Main.layer(config)).pipe(
    Effect.provide(Main.loggerLayer(config)),
    NodeRuntime.runMain({ disablePrettyLogger: true })
  )
}

const createKey = (args: ReadonlyArray<string>) => {
  const { values } = parseArgs({
    args: [...args],
    options: {
      ...Config.options,
      name: { type: "string" },
      role: { type: "string", default: "operator" },
      bots: { type: "string", default: "" }
    },
    strict: true
  })
  const config = Config.fromValues(values, process.env)
  if (values.name === undefined || values.name.trim() === "") fail("keys create needs --name")
  if (values.role !== "admin" && values.role !== "operator") fail("--role must be admin or operator")
  const botIds = values.bots === "" ? [] : values.bots.split(",").map((s) => Number(s.trim()))
  if (botIds.some((id) => !Number.isSafeInteger(id) || id <= 0)) fail("--bots must be comma-separated bot ids")
  const program = Effect.gen(function*() {
    const keys = yield* ApiKeys.ApiKeys
    const created = yield* keys.create({ name: values.name!.trim(), role: values.role as "admin" | "operator", bot_ids: botIds })
    process.stderr.write(`created ${created.role} key ${created.id} "${created.name}" (${created.prefix}…)\n`)
    process.stdout.write(`${created.key}\n`)
  }).pipe(
    Effect.catchTags({
      BotNotFound: (e) => Effect.sync(() => fail(e.message)),
      InvalidInput: (e) => Effect.sync(() => fail(e.message))
    }),
    Effect.provide(ApiKeys.layer.pipe(Layer.provide(Main.storageLayer(config)))),
    Effect.provide(Main.loggerLayer(config))
  )
  NodeRuntime.runMain(program, { disablePrettyLogger: true })
}

const main = (argv: ReadonlyArray<string>) => {
  const [command, ...rest] = argv
  try {
    if (command === "help" || command === "--help" || command === "-h") return void process.stdout.write(`${usage}\n`)
    if (command === undefined || command.startsWith("--")) return serve(argv)
    if (command === "serve") return serve(rest)
    if (command === "keys" && rest[0] === "create") return createKey(rest.slice(1))
    fail(`unknown command "${argv.join(" ")}"\n\n${usage}`)
  } catch (e) {
    if (e instanceof Config.ConfigError || (e instanceof TypeError && "code" in e)) fail(e.message)
    throw e
  }
}

main(process.argv.slice(2))
