import type { Kysely, Migration } from "kysely"
import { type Cipher, checkPlaintext } from "../SecretKey.js"

/** The settings 0010 encrypts (frozen: later secret settings are written encrypted from the start). */
const secretSettingsOf0010 = ["llm.api_key"]

/**
 * 0010: bot tokens, bots' `secret_token`, webhook secrets and the LLM key are encrypted with the
 * secret key; tokens get a keyed hash (`token_hash`, unique) for lookups; `botrelay_secret_key` keeps
 * an encrypted check value that tells whether a key is this database's key.
 */
export const migration = (cipher: Cipher): Migration => ({
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("botrelay_bots")
      .addColumn("token_hash", "text", (c) => c.notNull().defaultTo(""))
      .execute()
    const bots = await db.selectFrom("botrelay_bots").select(["id", "token", "secret_token"]).execute()
    for (const bot of bots) {
      await db.updateTable("botrelay_bots").set({
        token: cipher.encrypt("token", bot.token),
        token_hash: cipher.tokenHash(bot.token),
        secret_token: cipher.encrypt("secret_token", bot.secret_token)
      }).where("id", "=", bot.id).execute()
    }
    await db.schema
      .createIndex("botrelay_bots_token_hash")
      .on("botrelay_bots")
      .column("token_hash")
      .unique()
      .execute()
    const hooks = await db.selectFrom("botrelay_webhooks").select(["bot_id", "secret"]).execute()
    for (const hook of hooks) {
      await db.updateTable("botrelay_webhooks").set({ secret: cipher.encrypt("webhook_secret", hook.secret) })
        .where("bot_id", "=", hook.bot_id).execute()
    }
    const settings = await db.selectFrom("botrelay_settings").select(["name", "value"])
      .where("name", "in", secretSettingsOf0010).execute()
    for (const setting of settings) {
      await db.updateTable("botrelay_settings").set({ value: cipher.encrypt("setting", setting.value) })
        .where("name", "=", setting.name).execute()
    }
    await db.schema
      .createTable("botrelay_secret_key")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("check_value", "text", (c) => c.notNull())
      .execute()
    await db.insertInto("botrelay_secret_key")
      .values({ id: 1, check_value: cipher.encrypt("check", checkPlaintext) })
      .execute()
  },
  async down(db: Kysely<any>) {
    const bots = await db.selectFrom("botrelay_bots").select(["id", "token", "secret_token"]).execute()
    for (const bot of bots) {
      await db.updateTable("botrelay_bots").set({
        token: cipher.decrypt("token", bot.token),
        secret_token: cipher.decrypt("secret_token", bot.secret_token)
      }).where("id", "=", bot.id).execute()
    }
    const hooks = await db.selectFrom("botrelay_webhooks").select(["bot_id", "secret"]).execute()
    for (const hook of hooks) {
      await db.updateTable("botrelay_webhooks").set({ secret: cipher.decrypt("webhook_secret", hook.secret) })
        .where("bot_id", "=", hook.bot_id).execute()
    }
    const settings = await db.selectFrom("botrelay_settings").select(["name", "value"])
      .where("name", "in", secretSettingsOf0010).execute()
    for (const setting of settings) {
      await db.updateTable("botrelay_settings").set({ value: cipher.decrypt("setting", setting.value) })
        .where("name", "=", setting.name).execute()
    }
    await db.schema.dropIndex("botrelay_bots_token_hash").ifExists().execute()
    await db.schema.alterTable("botrelay_bots").dropColumn("token_hash").execute()
    await db.schema.dropTable("botrelay_secret_key").ifExists().execute()
  }
})
