import { existsSync, renameSync, rmSync } from "node:fs"
import { parseArgs } from "node:util"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Account, Accounts, ApiKey, ApiKeys, AuditLog, Events } from "@botrelay/core"
import { Botrelay, NodePasswordHasher } from "@botrelay/node"
import { SecretKey, SqliteStores } from "@botrelay/sqlite"
import { Effect, Layer, LogLevel, ParseResult, Redacted, Schema } from "effect"
import * as Backup from "./Backup.js"
import * as Config from "./Config.js"
import * as Main from "./Main.js"
import * as Prompt from "./Prompt.js"
import * as StartHeap from "./StartHeap.js"

const usage = `Usage:
  botrelay [serve] [options]          start the server
  botrelay keys create --name NAME [--role admin|operator] [--bots 1,2] [options]
                                      mint an API key and print it
  botrelay accounts create --username NAME [--role admin|operator] [--display-name TEXT] [--bots 1,2]
                           [--password-stdin] [options]
                                      create a console account and print it; the password is asked
                                      twice on the terminal, or read as one line from stdin
  botrelay secret-key rotate [--database FILE]
                                      re-encrypt the stored secrets with a new key (stop the server first);
                                      the new key is BOTRELAY_NEW_SECRET_KEY, or a generated one
  botrelay migrate --from FILE --to URL [--force]
                                      copy a SQLite database into PostgreSQL (stop the server first), in one
                                      transaction, secrets re-encrypted with BOTRELAY_SECRET_KEY; a target that
                                      holds Botrelay data is refused unless --force, which empties it first
  botrelay backup --to FILE [--database FILE] [--force]
                                      copy the SQLite database (consistent while a server runs) to FILE, 0600,
                                      and its secret key file to FILE.key; PostgreSQL: use pg_dump
                                      (docs/operations.md)
  botrelay restore --from FILE [--database FILE] [--force]
                                      replace the SQLite database with the backup FILE (stop the server first);
                                      a database holding anything is refused unless --force; the key is
                                      FILE.key, else BOTRELAY_SECRET_KEY or the database's key file
  botrelay demo [--port 8080] [--speed 1] [--people 20] [--chats 0]
                                      the offline demo: the server on a throwaway database against a
                                      simulated Telegram, with people writing to a support desk; prints
                                      the console address and a one-time login (--port 0: any free port,
                                      --speed: how much faster the script runs, --people: customers,
                                      --chats: extra people writing once, to fill the chat list)

Options (each also read from its environment variable):
${
  Object.values(Config.settings).map((s) =>
    `  --${s.flag.padEnd(14)} ${s.env.padEnd(24)} default: ${s.default ?? ("shown" in s ? s.shown : "(none)")}`
  ).join("\n")
}
  (env only)         ${Config.secretKeyEnv.padEnd(24)} default: <data dir>/secret.key, generated (required with PostgreSQL)

In production run \`node packages/server/dist/bin.js\` (or the botrelay bin) directly:
pnpm does not pass SIGTERM on to its child.`

const fail = (message: string): never => {
  process.stderr.write(`botrelay: ${message}\n`)
  process.exit(2)
}

/** What was asked is refused (as opposed to a usage error): exit code 1. */
const refuse = (message: string): never => {
  process.stderr.write(`botrelay: ${message}\n`)
  process.exit(1)
}

/** Why storage could not be opened, each a sentence that names no secret. */
const storageRefusals = new Set(["SecretKeyError", "DatabaseInUse", "LockFileError", "ConnectionError", "MigrationError"])

/** Storage that cannot be opened ends a command with its reason and exit code 1, not a stack trace. */
const refusingStorage = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchIf(
    effect,
    (e) => typeof e === "object" && e !== null && "_tag" in e && storageRefusals.has(String(e._tag)),
    (e) => Effect.sync(() => refuse((e as Error).message))
  )

/** Shutdown drains in-flight work; whatever still runs after this long is cut short. */
const shutdownGrace = 10_000

/** After SIGTERM or SIGINT the runtime stops the server; if that takes longer than the grace, the process exits. */
const exitAfterGrace = () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () =>
      setTimeout(() => {
        process.stderr.write(`botrelay: still stopping ${shutdownGrace / 1000} s after ${signal}; exiting\n`)
        process.exit(0)
      }, shutdownGrace).unref())
  }
}

const serve = (args: ReadonlyArray<string>) => {
  const config = Config.load(args)
  exitAfterGrace()
  const started = Layer.merge(Main.printConsoleUrl(config.publicUrl), Layer.effectDiscard(Effect.sync(StartHeap.release)))
  Layer.launch(started.pipe(Layer.provideMerge(Main.layer(config)))).pipe(
    refusingStorage,
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
  const botIds = parseBots(values.bots)
  const name = Schema.decodeUnknownEither(ApiKey.NewApiKey.fields.name)(values.name)
  if (name._tag === "Left") fail("--name must be 1 to 128 characters without control characters")
  const program = Effect.gen(function*() {
    const keys = yield* ApiKeys.ApiKeys
    const created = yield* keys.create({
      name: name._tag === "Right" ? name.right : "",
      role: values.role as "admin" | "operator",
      bot_ids: botIds
    })
    yield* AuditLog.recordDone(AuditLog.cli, "keys.create", {
      target_type: "key",
      target_id: created.id,
      details: { name: created.name, role: created.role, bot_ids: created.bot_ids }
    })
    process.stderr.write(`created ${created.role} key ${created.id} "${created.name}" (${created.prefix}…)\n`)
    process.stdout.write(`${created.key}\n`)
  }).pipe(
    Effect.catchTags({
      BotNotFound: (e) => Effect.sync(() => fail(e.message)),
      InvalidInput: (e) => Effect.sync(() => fail(e.message))
    }),
    Effect.provide(
      Layer.merge(ApiKeys.layer, AuditLog.layer).pipe(Layer.provide(Layer.merge(Main.storageLayer(config), Events.layer)))
    ),
    refusingStorage,
    Effect.provide(Main.loggerLayer(config))
  )
  NodeRuntime.runMain(program, { disablePrettyLogger: true })
}

const firstIssue = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "invalid input"

const parseBots = (bots: string): Array<number> => {
  const ids = bots === "" ? [] : bots.split(",").map((s) => Number(s.trim()))
  if (ids.some((id) => !Number.isSafeInteger(id) || id <= 0)) fail("--bots must be comma-separated bot ids")
  return ids
}

/** The new account's password: one line of stdin, or asked twice on the terminal without echo. */
const readPassword = async (fromStdin: boolean): Promise<string> => {
  if (fromStdin) return Prompt.readLine()
  if (process.stdin.isTTY !== true) return refuse("there is no terminal to ask for the password on; use --password-stdin")
  const first = await Prompt.hidden("Password: ")
  const second = await Prompt.hidden("Repeat the password: ")
  return first === second ? first : refuse("the passwords do not match; nothing was created")
}

const createAccount = async (args: ReadonlyArray<string>) => {
  const { values } = parseArgs({
    args: [...args],
    options: {
      ...Config.options,
      username: { type: "string" },
      role: { type: "string", default: "operator" },
      "display-name": { type: "string", default: "" },
      bots: { type: "string", default: "" },
      "password-stdin": { type: "boolean", default: false }
    },
    strict: true
  })
  const config = Config.fromValues(values, process.env)
  if (values.username === undefined) fail("accounts create needs --username")
  if (values.role !== "admin" && values.role !== "operator") fail("--role must be admin or operator")
  const { password: _, ...accountFields } = Account.NewAccount.fields
  const fields = Schema.decodeUnknownEither(Schema.Struct(accountFields))({
    username: values.username,
    display_name: values["display-name"],
    role: values.role,
    bot_ids: parseBots(values.bots)
  }, { errors: "first" })
  if (fields._tag === "Left") return fail(firstIssue(fields.left))
  const password = Schema.decodeUnknownEither(Account.Password)(await readPassword(values["password-stdin"]))
  if (password._tag === "Left") return refuse(`${firstIssue(password.left)}; nothing was created`)
  const program = Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const account = yield* accounts.create({ ...fields.right, password: password.right })
    yield* AuditLog.recordDone(AuditLog.cli, "accounts.create", {
      target_type: "account",
      target_id: account.id,
      details: { username: account.username, role: account.role, bot_ids: account.bot_ids }
    })
    process.stderr.write(`created ${account.role} account ${account.id} "${account.username}"\n`)
    process.stdout.write(`${JSON.stringify(account)}\n`)
  }).pipe(
    Effect.catchTags({
      UsernameTaken: (e) => Effect.sync(() => refuse(e.message)),
      BotNotFound: (e) => Effect.sync(() => refuse(e.message)),
      InvalidInput: (e) => Effect.sync(() => refuse(e.message))
    }),
    Effect.provide(
      Layer.merge(Accounts.layer(), AuditLog.layer).pipe(
        Layer.provide(Layer.merge(Main.storageLayer(config), NodePasswordHasher.layer))
      )
    ),
    refusingStorage,
    Effect.provide(Main.loggerLayer(config))
  )
  NodeRuntime.runMain(program, { disablePrettyLogger: true })
}

/** The new key's variable for `secret-key rotate`. */
const newSecretKeyEnv = "BOTRELAY_NEW_SECRET_KEY"

const rotateSecretKey = (args: ReadonlyArray<string>) => {
  const { values } = parseArgs({ args: [...args], options: Config.options, strict: true })
  const config = Config.fromValues(values, process.env)
  const database = config.database
  if (database === ":memory:" || database === "") fail("secret-key rotate needs a database file (--database)")
  if (Botrelay.isPostgresUrl(database)) fail("secret-key rotate works on SQLite database files only")
  if (!existsSync(database)) fail(`there is no database at ${database}`)
  const keyFile = SecretKey.keyFileFor(database)
  const pending = `${keyFile}.new`
  let current: SecretKey.SecretKey
  let source: string
  if (config.secretKey === undefined) {
    if (!existsSync(keyFile)) fail(`${Config.secretKeyEnv} is not set and there is no key file at ${keyFile}`)
    current = SecretKey.readFile(keyFile)
    source = `the key file ${keyFile}`
  } else {
    current = SecretKey.fromHex(Redacted.value(config.secretKey))!
    source = Config.secretKeyEnv
  }
  const given = process.env[newSecretKeyEnv]
  const next = given === undefined || given === "" ? SecretKey.generate() : SecretKey.fromHex(given)
  if (next === undefined) fail(`${newSecretKeyEnv} must be 64 hexadecimal characters (\`openssl rand -hex 32\`)`)
  const toFile = config.secretKey === undefined
  if (toFile) {
    if (existsSync(pending)) {
      fail(
        `${pending} exists: an earlier rotation stopped midway. If the server starts with ${keyFile}, remove ` +
          `${pending}; if it does not, move ${pending} over ${keyFile}. Then run the rotation again.`
      )
    }
    SecretKey.writeFile(pending, next!)
  }
  const program = Effect.scoped(
    SqliteStores.rotateSecretKey({ filename: database, secretKey: current, secretKeySource: source }, next!)
  ).pipe(
    Effect.matchEffect({
      onFailure: (e) =>
        Effect.sync(() => {
          if (toFile) rmSync(pending, { force: true })
          process.stderr.write(`botrelay: ${e.message}; nothing was changed\n`)
          process.exit(1)
        }),
      onSuccess: (rotated) =>
        Effect.sync(() => {
          const counts =
            `${rotated.bots} bots, ${rotated.webhook_secrets} webhook secrets, ${rotated.settings} settings, ${rotated.bridges} bridges`
          if (toFile) {
            renameSync(pending, keyFile)
            process.stderr.write(`re-encrypted ${counts} with a new key, saved to ${keyFile}\n`)
          } else if (given === undefined || given === "") {
            process.stderr.write(
              `re-encrypted ${counts} with the new key below; set ${Config.secretKeyEnv} to it before the next start\n`
            )
            process.stdout.write(`${SecretKey.toHex(next!)}\n`)
          } else {
            process.stderr.write(
              `re-encrypted ${counts}; set ${Config.secretKeyEnv} to the value of ${newSecretKeyEnv} before the next start\n`
            )
          }
        })
    }),
    Effect.provide(Main.loggerLayer(config))
  )
  NodeRuntime.runMain(program, { disablePrettyLogger: true })
}

const migrate = (args: ReadonlyArray<string>) => {
  const { values } = parseArgs({
    args: [...args],
    options: {
      from: { type: "string" },
      to: { type: "string" },
      force: { type: "boolean", default: false }
    },
    strict: true,
    allowPositionals: false
  })
  if (values.from === undefined || values.from === "") fail("migrate needs --from FILE (the SQLite database)")
  if (values.to === undefined || !Botrelay.isPostgresUrl(values.to)) {
    fail("migrate needs --to URL (postgres:// or postgresql://)")
  }
  const hex = process.env[Config.secretKeyEnv]
  if (hex === undefined || hex === "") {
    refuse(
      `${Config.secretKeyEnv} is required: the key the secrets are encrypted with on PostgreSQL, 64 hexadecimal ` +
        "characters (`openssl rand -hex 32`), the same the servers start with; nothing was written"
    )
  }
  const secretKey = SecretKey.fromHex(hex!)
  if (secretKey === undefined) {
    refuse(`${Config.secretKeyEnv} must be 64 hexadecimal characters (\`openssl rand -hex 32\`); nothing was written`)
  }
  // PostgreSQL's driver is loaded only by the commands that use it
  const program = Effect.promise(() => import("./Migrate.js")).pipe(
    Effect.flatMap((Migrate) =>
      Migrate.migrate({
        from: values.from!,
        to: values.to!,
        force: values.force,
        secretKey: secretKey!,
        secretKeySource: Config.secretKeyEnv
      }).pipe(Effect.map((copied) => Migrate.report(copied, values.to!)))
    ),
    Effect.matchEffect({
      onFailure: (e) =>
        Effect.sync(() => {
          const why = e._tag === "StorageError" && e.cause instanceof Error
            ? `could not copy: ${e.cause.message}`
            : e.message
          const hint = e._tag === "TargetNotEmpty" ? " (--force empties its Botrelay tables first)" : ""
          refuse(`${why}; nothing was written${hint}`)
        }),
      onSuccess: (report) => Effect.sync(() => void process.stdout.write(report))
    }),
    Effect.provide(Main.loggerLayer({ logLevel: LogLevel.Info }))
  )
  NodeRuntime.runMain(program, { disablePrettyLogger: true })
}

/** The database of `backup` and `restore`: `--database`, else `BOTRELAY_DATABASE`, else the default; SQLite only. */
const sqliteDatabase = (given: string | undefined, command: string, postgresTool: string): string => {
  const database = given ?? (process.env[Config.settings.database.env] || Config.settings.database.default)
  if (Botrelay.isPostgresUrl(database)) {
    fail(
      `${command} works on SQLite database files; for PostgreSQL use ${postgresTool} (see "Backups" in docs/operations.md)`
    )
  }
  if (database === ":memory:" || database === "") fail(`${command} needs a database file (--database)`)
  return database
}

const backup = (args: ReadonlyArray<string>) => {
  const { values } = parseArgs({
    args: [...args],
    options: { to: { type: "string" }, database: { type: "string" }, force: { type: "boolean", default: false } },
    strict: true,
    allowPositionals: false
  })
  if (values.to === undefined || values.to === "") fail("backup needs --to FILE")
  const database = sqliteDatabase(values.database, "backup", "pg_dump")
  const keyFromEnv = (process.env[Config.secretKeyEnv] ?? "") !== ""
  const program = Backup.backup({ database, to: values.to!, force: values.force, keyFromEnv }).pipe(
    Effect.matchEffect({
      onFailure: (e) => Effect.sync(() => refuse(`${e.message}; no backup was written`)),
      onSuccess: (done) =>
        Effect.sync(() => {
          process.stdout.write(`backed up ${database} to ${values.to} (${done.bytes} bytes)\n`)
          process.stdout.write(
            done.keyFile === undefined
              ? `its secret key is ${Config.secretKeyEnv}${
                keyFromEnv ? "" : " (there is no key file)"
              }: keep that value with the backup, its tokens need it\n`
              : `its secret key is in ${done.keyFile}: keep it with the backup, apart from other copies\n`
          )
        })
    })
  )
  NodeRuntime.runMain(program, { disablePrettyLogger: true })
}

const restore = (args: ReadonlyArray<string>) => {
  const { values } = parseArgs({
    args: [...args],
    options: { from: { type: "string" }, database: { type: "string" }, force: { type: "boolean", default: false } },
    strict: true,
    allowPositionals: false
  })
  if (values.from === undefined || values.from === "") fail("restore needs --from FILE")
  const database = sqliteDatabase(values.database, "restore", "pg_restore")
  const hex = process.env[Config.secretKeyEnv]
  const secretKey = hex === undefined || hex === "" ? undefined : SecretKey.fromHex(hex)
  if (hex !== undefined && hex !== "" && secretKey === undefined) {
    fail(`${Config.secretKeyEnv} must be 64 hexadecimal characters (\`openssl rand -hex 32\`)`)
  }
  const program = Backup.restore({ from: values.from!, database, force: values.force, secretKey }).pipe(
    Effect.matchEffect({
      onFailure: (e) => Effect.sync(() => refuse(`${e.message}; nothing was changed`)),
      onSuccess: (done) =>
        Effect.sync(() => {
          process.stdout.write(`restored ${values.from} into ${database}\n`)
          if (done.keyFile !== undefined) process.stdout.write(`its secret key is now ${done.keyFile}\n`)
        })
    })
  )
  NodeRuntime.runMain(program, { disablePrettyLogger: true })
}

/** A whole number from `min` to `max` given to `--flag`, or a usage error. */
const wholeNumber = (value: string, flag: string, min: number, max: number): number => {
  const n = Number(value)
  if (value.trim() === "" || !Number.isInteger(n) || n < min || n > max) {
    fail(`--${flag} must be a whole number from ${min} to ${max}`)
  }
  return n
}

const demo = (args: ReadonlyArray<string>) => {
  const { values } = parseArgs({
    args: [...args],
    options: {
      port: { type: "string", default: "8080" },
      speed: { type: "string", default: "1" },
      people: { type: "string", default: "20" },
      chats: { type: "string", default: "0" }
    },
    strict: true,
    allowPositionals: false
  })
  const speed = Number(values.speed)
  if (values.speed.trim() === "" || !Number.isFinite(speed) || speed < 0.1 || speed > 10_000) {
    fail("--speed must be a number from 0.1 to 10000")
  }
  const options = {
    port: wholeNumber(values.port, "port", 0, 65535),
    speed,
    people: wholeNumber(values.people, "people", 0, 10_000),
    chats: wholeNumber(values.chats, "chats", 0, 1_000_000)
  }
  exitAfterGrace()
  // Loaded only here: the demo brings the simulated Telegram (@botrelay/testing), which serving never needs.
  void import("./Demo.js").then((Demo) => Demo.main(options))
}

/** Runs the command in `argv` (the arguments after the script's path). */
export const main = (argv: ReadonlyArray<string>) => {
  const [command, ...rest] = argv
  try {
    if (command === "help" || command === "--help" || command === "-h") return void process.stdout.write(`${usage}\n`)
    if (command === undefined || command.startsWith("--")) return serve(argv)
    if (command === "serve") return serve(rest)
    if (command === "keys" && rest[0] === "create") return createKey(rest.slice(1))
    if (command === "accounts" && rest[0] === "create") {
      return void createAccount(rest.slice(1)).catch((e: unknown) => {
        if (e instanceof Config.ConfigError || e instanceof SecretKey.SecretKeyError) fail(e.message)
        throw e
      })
    }
    if (command === "secret-key" && rest[0] === "rotate") return rotateSecretKey(rest.slice(1))
    if (command === "migrate") return migrate(rest)
    if (command === "backup") return backup(rest)
    if (command === "restore") return restore(rest)
    if (command === "demo") return demo(rest)
    fail(`unknown command "${argv.join(" ")}"\n\n${usage}`)
  } catch (e) {
    if (
      e instanceof Config.ConfigError || e instanceof SecretKey.SecretKeyError || (e instanceof TypeError && "code" in e)
    ) fail(e.message)
    throw e
  }
}

