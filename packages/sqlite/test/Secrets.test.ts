import { Migrations, SecretKey, SqliteStores } from "@botrelay/sqlite"
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Either, Option, Redacted } from "effect"
import { Kysely, Migrator, SqliteDialect } from "kysely"
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { open } from "./Open.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "botrelay-secrets-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
const otherToken = "987654321:ZZHdqTcvCH1vGWJxfSeofSAs0K5PALDxyz"
const secretToken = "backend_secret_Q7w9e2r4t6y8"
const webhookSecret = "webhook_secret_M3n5b7v9c1x3z5"
const llmKey = "sk-llm-key-P0o9i8u7y6t5r4e3"
const signingSecret = "whsec_SigningQ7w9e2r4t6y8u0i2o4p6a8s0d2f4"
const bridgeSecret = "whsec_BridgeM3n5b7v9c1x3z5l7k9j1h3g5f7d9"
const secrets = [token, token.split(":")[1]!, secretToken, webhookSecret, llmKey, signingSecret, bridgeSecret]

const botInput = (value: string) => ({
  token: Redacted.make(value),
  name: "bot",
  source: "web" as const,
  manage_enabled: true,
  proxy_enabled: false,
  backend_url: "",
  secret_token: Redacted.make(secretToken),
  signing_secret: Redacted.make(signingSecret),
  long_poll_enabled: false,
  description: "",
  created_at: "2025-01-01T00:00:00.000Z"
})

const mode = (file: string) => statSync(file).mode & 0o777

/** Every byte of the database and its companions, as latin1 text (so any UTF-8 secret shows as is). */
const rawBytes = (file: string): string =>
  [file, `${file}-wal`, `${file}-shm`].filter(existsSync).map((f) => readFileSync(f).toString("latin1")).join("")

const assertNoSecrets = (file: string) => {
  const bytes = rawBytes(file)
  for (const secret of secrets) assert.notInclude(bytes, secret, "a secret is in the database file in plaintext")
}

/** Checkpoints the WAL into the file, from a second connection, as a backup tool would. */
const checkpoint = (file: string) => {
  const db = new Database(file)
  try {
    db.pragma("wal_checkpoint(TRUNCATE)")
  } finally {
    db.close()
  }
}

const key = (hex: string) => SecretKey.fromHex(hex)!
const keyA = key("a".repeat(64))
const keyB = key("b".repeat(64))

describe("SqliteStores secrets at rest", () => {
  it.scoped("the database file, its -wal and -shm and the key file are created 0600", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const storage = yield* open({ filename: file })
      yield* storage.insertBot(botInput(token))
      for (const f of [file, `${file}-wal`, `${file}-shm`, join(file, "..", "secret.key")]) {
        assert.isTrue(existsSync(f), f)
        assert.strictEqual(mode(f).toString(8), "600", f)
      }
    }))

  it.scoped("an existing database file with wider permissions is tightened to 0600 at start", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      yield* Effect.scoped(open({ filename: file }))
      chmodSync(file, 0o644)
      chmodSync(join(file, "..", "secret.key"), 0o644)
      yield* Effect.scoped(open({ filename: file }))
      assert.strictEqual(mode(file).toString(8), "600")
      assert.strictEqual(mode(join(file, "..", "secret.key")).toString(8), "600")
    }))

  it.scoped("the file holds no plaintext token, secret_token, webhook secret or LLM key, also after a checkpoint", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      yield* Effect.scoped(Effect.gen(function*() {
        const storage = yield* open({ filename: file, secretKey: keyA })
        const bot = yield* storage.insertBot(botInput(token))
        yield* storage.setWebhookSecret(bot.id, webhookSecret)
        yield* storage.writeSettings({ "llm.api_key": llmKey, "llm.model": "gpt-test" })
        assertNoSecrets(file)
        checkpoint(file)
        assertNoSecrets(file)

        assert.strictEqual(Redacted.value(Option.getOrThrow(yield* storage.findBotByToken(token)).token), token)
        assert.strictEqual(Option.getOrThrow(yield* storage.webhookSecret(bot.id)), webhookSecret)
        assert.deepStrictEqual(yield* storage.readSettings(["llm.api_key", "llm.model"]), {
          "llm.api_key": llmKey,
          "llm.model": "gpt-test"
        })
        const duplicate = yield* Effect.flip(storage.insertBot(botInput(token)))
        assert.strictEqual(duplicate._tag, "DuplicateToken")
      }))
      assertNoSecrets(file)
      const raw = new Database(file, { readonly: true })
      const row = raw.prepare("SELECT token, token_hash, secret_token FROM botrelay_bots").get() as Record<string, string>
      raw.close()
      assert.match(row["token"]!, /^v1:/)
      assert.match(row["secret_token"]!, /^v1:/)
      assert.match(row["token_hash"]!, /^[0-9a-f]{64}$/)

      const reopened = yield* open({ filename: file, secretKey: keyA })
      const bot = Option.getOrThrow(yield* reopened.findBotByToken(token))
      assert.strictEqual(Redacted.value(bot.secret_token), secretToken)
    }))

  it.scoped("a wrong key fails with a clear SecretKeyError that holds no key", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      yield* Effect.scoped(Effect.flatMap(
        open({ filename: file, secretKey: keyA }),
        (storage) => storage.insertBot(botInput(token))
      ))
      const error = yield* Effect.flip(Effect.scoped(
        open({ filename: file, secretKey: keyB, secretKeySource: "BOTRELAY_SECRET_KEY" })
      ))
      assert.strictEqual(error._tag, "SecretKeyError")
      assert.include(error.message, "BOTRELAY_SECRET_KEY")
      assert.include(error.message, "does not decrypt this database's secrets")
      assert.notInclude(error.message, "b".repeat(16))
      assert.notInclude(error.message, "a".repeat(16))

      const fromFile = yield* Effect.flip(Effect.scoped(open({ filename: file })))
      assert.strictEqual(fromFile._tag, "SecretKeyError")
      assert.include(fromFile.message, "secret.key")
    }))

  it.scoped("without a key the key file beside the database is generated once and used again", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = join(dir, "botrelay.db")
      yield* Effect.scoped(Effect.flatMap(open({ filename: file }), (s) => s.insertBot(botInput(token))))
      const written = readFileSync(join(dir, "secret.key"), "utf8")
      assert.match(written, /^[0-9a-f]{64}\n$/)
      const storage = yield* open({ filename: file })
      assert.isTrue(Option.isSome(yield* storage.findBotByToken(token)))
      assert.strictEqual(readFileSync(join(dir, "secret.key"), "utf8"), written)
    }))

  it.scoped("a key file that is not 64 hexadecimal characters is refused", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      writeFileSync(join(dir, "secret.key"), "not a key\n", { mode: 0o600 })
      const error = yield* Effect.flip(Effect.scoped(open({ filename: join(dir, "botrelay.db") })))
      assert.strictEqual(error._tag, "SecretKeyError")
      assert.include(error.message, "must hold 64 hexadecimal characters")
    }))

  it.scoped("':memory:' needs no key", () =>
    Effect.gen(function*() {
      const storage = yield* open({ filename: ":memory:" })
      yield* storage.insertBot(botInput(token))
      assert.isTrue(Option.isSome(yield* storage.findBotByToken(token)))
    }))

  it.scoped("0008 encrypts the plaintext rows of an older database and leaves no plaintext in the file", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const host = new Database(file)
      host.pragma("journal_mode = WAL")
      const older = Object.fromEntries(
        Object.entries(Migrations.migrations(SecretKey.cipher(keyA))).filter(([name]) => name < "0010_encrypted_secrets")
      )
      const { error } = yield* Effect.promise(() =>
        new Migrator({
          db: new Kysely<unknown>({ dialect: new SqliteDialect({ database: host }) }),
          provider: { getMigrations: () => Promise.resolve(older) },
          migrationTableName: Migrations.migrationTableName,
          migrationLockTableName: Migrations.migrationLockTableName
        }).migrateToLatest()
      )
      assert.isUndefined(error)
      host.prepare(
        "INSERT INTO botrelay_bots (token, secret_token, source, created_at, updated_at) VALUES (?, ?, 'web', '', '')"
      ).run(token, secretToken)
      host.prepare("INSERT INTO botrelay_webhooks (bot_id, secret) VALUES (1, ?)").run(webhookSecret)
      host.prepare("INSERT INTO botrelay_settings (name, value) VALUES ('llm.api_key', ?)").run(llmKey)
      host.pragma("wal_checkpoint(TRUNCATE)")
      host.close()
      assert.include(rawBytes(file), token)

      yield* Effect.scoped(Effect.gen(function*() {
        const storage = yield* open({ filename: file, secretKey: keyA })
        const bot = Option.getOrThrow(yield* storage.findBotByToken(token))
        assert.strictEqual(Redacted.value(bot.secret_token), secretToken)
        assert.strictEqual(Option.getOrThrow(yield* storage.webhookSecret(bot.id)), webhookSecret)
        assert.deepStrictEqual(yield* storage.readSettings(["llm.api_key"]), { "llm.api_key": llmKey })
        assertNoSecrets(file)
      }))
      checkpoint(file)
      assertNoSecrets(file)
    }))

  it.scoped("rotation re-encrypts everything with the new key; the old key no longer opens the database", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      yield* Effect.scoped(Effect.gen(function*() {
        const storage = yield* open({ filename: file, secretKey: keyA })
        const a = yield* storage.insertBot(botInput(token))
        yield* storage.insertBot(botInput(otherToken))
        yield* storage.setWebhookSecret(a.id, webhookSecret)
        yield* storage.writeSettings({ "llm.api_key": llmKey })
        yield* storage.insertBridge({
          name: "ops",
          url: "https://hooks.example/bridge",
          format: "json",
          events: ["message"],
          bot_ids: [],
          enabled: true,
          signing_secret: Redacted.make(bridgeSecret),
          created_at: "2025-01-01T00:00:00.000Z"
        })
      }))
      const before = readFileSync(file)

      const refused = yield* Effect.flip(
        Effect.scoped(SqliteStores.rotateSecretKey({ filename: file, secretKey: keyB }, keyA))
      )
      assert.strictEqual(refused._tag, "SecretKeyError")
      assert.isTrue(readFileSync(file).equals(before), "a refused rotation changes nothing")

      const rotated = yield* Effect.scoped(SqliteStores.rotateSecretKey({ filename: file, secretKey: keyA }, keyB))
      assert.deepStrictEqual(rotated, { bots: 2, webhook_secrets: 1, settings: 1, bridges: 1 })
      assertNoSecrets(file)

      const old = yield* Effect.either(Effect.scoped(open({ filename: file, secretKey: keyA })))
      assert.isTrue(Either.isLeft(old) && old.left._tag === "SecretKeyError")
      const storage = yield* open({ filename: file, secretKey: keyB })
      const bot = Option.getOrThrow(yield* storage.findBotByToken(token))
      assert.strictEqual(Redacted.value(bot.token), token)
      assert.strictEqual(Redacted.value(bot.secret_token), secretToken)
      assert.isTrue(Option.isSome(yield* storage.findBotByToken(otherToken)))
      assert.strictEqual(Option.getOrThrow(yield* storage.webhookSecret(bot.id)), webhookSecret)
      assert.deepStrictEqual(yield* storage.readSettings(["llm.api_key"]), { "llm.api_key": llmKey })
      assert.strictEqual(Redacted.value(bot.signing_secret), signingSecret)
      const [bridge] = yield* storage.listBridges
      assert.strictEqual(Redacted.value(bridge!.signing_secret), bridgeSecret)
    }))
})
