import { Context, Effect, Layer, ParseResult, Schema } from "effect"
import type { Account, AccountNotFound, AccountUpdate, LastAdminAccount } from "../domain/Account.js"
import type { ApiKey, ApiKeyNotFound, LastAdminKey } from "../domain/ApiKey.js"
import type { Bot, BotNotFound, BotUpdate, DuplicateToken } from "../domain/Bot.js"
import * as Scope from "../domain/Scope.js"
import type { Tag, TagNotFound } from "../domain/ChatTag.js"
import * as ConfigDocument from "../domain/ConfigDocument.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import type { Route, RouteNotFound } from "../domain/Route.js"
import { normalizeCondition } from "../domain/Route.js"
import { nowIso } from "../internal/Time.js"
import * as ConfigRevision from "../runtime/ConfigRevision.js"
import { type LlmSettingFixed, LlmSettings, LlmSettingsUpdate } from "../runtime/LlmSettings.js"
import { SettingsStore } from "../stores/SettingsStore.js"
import { Accounts } from "./Accounts.js"
import { ApiKeys } from "./ApiKeys.js"
import { Bots } from "./Bots.js"
import { Routes } from "./Routes.js"
import { Tags } from "./Tags.js"

/** How an import runs. */
export interface ImportOptions {
  /** Work out and answer the diff, change nothing. */
  readonly dryRun: boolean
  /** Delete the routes and tags the document does not list (only for the sections it has). */
  readonly prune: boolean
}

/** Why an import changed nothing: a moved revision, a document that does not fit, or a change a service refused. */
export type ImportError =
  | ConfigDocument.RevisionMoved
  | InvalidInput
  | StorageError
  | BotNotFound
  | DuplicateToken
  | RouteNotFound
  | TagNotFound
  | ApiKeyNotFound
  | LastAdminKey
  | AccountNotFound
  | LastAdminAccount
  | LlmSettingFixed

/** The configuration as data: exported without secrets, imported through the services that own each part. */
export interface ConfigurationService {
  /** The configuration and its revision. */
  readonly export: Effect.Effect<ConfigDocument.ConfigDocument, StorageError>
  /**
   * Applies a document whose revision is the current one: every change through the same services as the API
   * (so the runtime hears of each), all or nothing, the revision bumped once. Bots, keys and accounts are
   * matched by id and never created; routes and tags may be. A dry run answers the same diff and changes nothing.
   */
  readonly import: (
    document: ConfigDocument.ConfigDocument,
    options: ImportOptions
  ) => Effect.Effect<ConfigDocument.ImportResult, ImportError>
}

/** The configuration as data. */
export class Configuration extends Context.Tag("@botrelay/core/Configuration")<Configuration, ConfigurationService>() {}

type Issue = { readonly path: string; readonly message: string }
type Changes = Record<string, readonly [unknown, unknown]>

/** One change of an import: what it reports, how to make it (its final diff entry) and how to take it back. */
interface Step {
  readonly entry: ConfigDocument.DiffEntry
  readonly apply: Effect.Effect<ConfigDocument.DiffEntry, ImportError>
  readonly undo: Effect.Effect<unknown, unknown>
}

const comparable = (value: unknown): string =>
  JSON.stringify(Array.isArray(value) ? [...new Set(value as ReadonlyArray<number>)].sort((a, b) => a - b) : value)

/** The fields of `fields` whose values differ, as `[old, new]`. */
const changesOf = <K extends string>(
  before: Readonly<Record<K, unknown>>,
  after: Readonly<Record<K, unknown>>,
  fields: ReadonlyArray<K>
): Changes => {
  const changes: Changes = {}
  for (const field of fields) {
    if (comparable(before[field]) !== comparable(after[field])) changes[field] = [before[field], after[field]]
  }
  return changes
}

const all = <K extends string>(record: Readonly<Record<K, unknown>>, fields: ReadonlyArray<K>, side: "old" | "new") =>
  Object.fromEntries(fields.map((f) => [f, side === "old" ? [record[f], null] : [null, record[f]]])) as Changes

const isEmpty = (changes: Changes) => Object.keys(changes).length === 0

/** The old (0) or new (1) values of the changes, as the patch `A` of the service that makes them. */
const pick = <A>(changes: Changes, side: 0 | 1): A =>
  Object.fromEntries(Object.entries(changes).map(([field, values]) => [field, values[side]])) as A

/** Issues for ids given twice in a section. */
const duplicates = (section: string, ids: ReadonlyArray<number>): Array<Issue> => {
  const seen = new Set<number>()
  const issues: Array<Issue> = []
  ids.forEach((id, i) => {
    if (id !== 0 && seen.has(id)) issues.push({ path: `${section}.${i}.id`, message: `id ${id} is listed twice` })
    seen.add(id)
  })
  return issues
}

const tagKey = (t: Pick<Tag, "bot_id" | "chat_id" | "user_id" | "tag">) => `${t.bot_id}/${t.chat_id}/${t.user_id}/${t.tag}`

const routeOf = (r: Route): ConfigDocument.ConfigRoute => ({
  id: r.id,
  source_bot_id: r.source_bot_id,
  target_bot_id: r.target_bot_id,
  condition_type: r.condition_type,
  condition_value: r.condition_value,
  action: r.action,
  target_chat_id: r.target_chat_id,
  enabled: r.enabled,
  description: r.description
})

const botOf = (b: Bot): ConfigDocument.ConfigBot => ({
  id: b.id,
  name: b.name,
  description: b.description,
  manage_enabled: b.manage_enabled,
  proxy_enabled: b.proxy_enabled,
  long_poll_enabled: b.long_poll_enabled,
  backend_url: b.backend_url,
  webhook_mode: b.webhook_mode,
  disabled: b.disabled,
  username: b.username
})

const tagOf = (t: Tag): ConfigDocument.ConfigTag => ({
  id: t.id,
  bot_id: t.bot_id,
  chat_id: t.chat_id,
  user_id: t.user_id,
  username: t.username,
  tag: t.tag,
  color: t.color
})

const keyOf = (k: ApiKey): ConfigDocument.ConfigKey => ({
  id: k.id,
  name: k.name,
  role: k.role,
  bot_ids: k.bot_ids,
  scopes: k.scopes,
  enabled: k.enabled,
  prefix: k.prefix,
  created_at: k.created_at,
  last_used_at: k.last_used_at
})

const accountOf = (a: Account): ConfigDocument.ConfigAccount => ({
  id: a.id,
  username: a.username,
  display_name: a.display_name,
  role: a.role,
  bot_ids: a.bot_ids,
  scopes: a.scopes,
  enabled: a.enabled,
  created_at: a.created_at,
  last_login_at: a.last_login_at
})

const llmFields = ["base_url", "model", "timeout_ms"] as const

/** Builds the service on the services that own each part of the configuration. */
export const make: Effect.Effect<
  ConfigurationService,
  never,
  Bots | Routes | Tags | ApiKeys | Accounts | LlmSettings | SettingsStore
> = Effect.gen(function*() {
  const bots = yield* Bots
  const routes = yield* Routes
  const tags = yield* Tags
  const keys = yield* ApiKeys
  const accounts = yield* Accounts
  const llm = yield* LlmSettings
  const settings = yield* SettingsStore
  /** One import at a time on this instance. */
  const oneAtATime = (yield* Effect.makeSemaphore(1)).withPermits(1)

  const current = Effect.all({
    bots: bots.list,
    routes: routes.list(),
    tags: tags.list({}),
    keys: keys.list,
    accounts: accounts.list,
    llm: llm.view
  })

  const exportDocument = Effect.gen(function*() {
    const revision = yield* settings.readConfigRevision
    const state = yield* current
    return {
      version: 1 as const,
      revision,
      exported_at: yield* nowIso,
      bots: state.bots.map(botOf),
      routes: state.routes.map(routeOf),
      tags: state.tags.map(tagOf),
      keys: state.keys.map(keyOf),
      accounts: state.accounts.map(accountOf),
      settings: { llm: { base_url: state.llm.base_url, model: state.llm.model, timeout_ms: state.llm.timeout_ms } }
    }
  }).pipe(Effect.withSpan("Configuration.export"))

  /** The steps that bring the configuration to the document's, or the issues that keep it from being applied. */
  const plan = (document: ConfigDocument.ConfigDocument, prune: boolean) =>
    Effect.map(current, (state) => {
      const issues: Array<Issue> = []
      const steps: Array<Step> = []
      const botIds = new Set(state.bots.map((b) => b.id))
      const checkBot = (path: string, id: number) => {
        if (!botIds.has(id)) issues.push({ path, message: `bot ${id} does not exist` })
      }

      if (document.settings !== undefined) {
        const before = state.llm
        const wanted = document.settings.llm
        const changes = changesOf(before, wanted, llmFields)
        const fixed = Object.keys(changes).filter((f) => (before.fixed as ReadonlyArray<string>).includes(f))
        for (const field of fixed) {
          issues.push({
            path: `settings.llm.${field}`,
            message: `${field} is set by the server's environment and cannot be changed through the API`
          })
        }
        const patch = Schema.decodeUnknownEither(LlmSettingsUpdate)(pick<unknown>(changes, 1), { errors: "all" })
        if (patch._tag === "Left") {
          for (const issue of ParseResult.ArrayFormatter.formatErrorSync(patch.left)) {
            issues.push({ path: ["settings", "llm", ...issue.path].join("."), message: issue.message })
          }
        } else if (!isEmpty(changes) && fixed.length === 0) {
          const entry = { op: "update" as const, kind: "settings" as const, id: "llm", changes }
          steps.push({
            entry,
            apply: Effect.as(llm.update(patch.right), entry),
            undo: llm.update(pick<LlmSettingsUpdate>(changes, 0))
          })
        }
      }

      if (document.bots !== undefined) {
        issues.push(...duplicates("bots", document.bots.map((b) => b.id)))
        const byId = new Map(state.bots.map((b) => [b.id, b]))
        document.bots.forEach((wanted, i) => {
          const bot = byId.get(wanted.id)
          if (bot === undefined) {
            issues.push({ path: `bots.${i}.id`, message: `bot ${wanted.id} does not exist; an import never creates bots` })
            return
          }
          const changes = changesOf(botOf(bot), wanted, ConfigDocument.botFields)
          if (isEmpty(changes)) return
          const entry = { op: "update" as const, kind: "bot" as const, id: bot.id, changes }
          const set = (side: 0 | 1) => {
            const { disabled, ...fields } = pick<Omit<BotUpdate, "id"> & { readonly disabled?: boolean }>(changes, side)
            return Effect.zipRight(
              Object.keys(fields).length === 0 ? Effect.void : bots.update({ id: bot.id, ...fields }),
              disabled === undefined ? Effect.void : bots.toggleDisabled(bot.id)
            )
          }
          steps.push({ entry, apply: Effect.as(set(1), entry), undo: set(0) })
        })
      }

      if (document.accounts !== undefined) {
        issues.push(...duplicates("accounts", document.accounts.map((a) => a.id)))
        const byId = new Map(state.accounts.map((a) => [a.id, a]))
        document.accounts.forEach((wanted, i) => {
          const account = byId.get(wanted.id)
          if (account === undefined) {
            issues.push({
              path: `accounts.${i}.id`,
              message: `account ${wanted.id} does not exist; an import never creates accounts`
            })
            return
          }
          if (wanted.username !== account.username) {
            issues.push({ path: `accounts.${i}.username`, message: "an import cannot rename an account" })
          }
          wanted.bot_ids.forEach((id, j) => checkBot(`accounts.${i}.bot_ids.${j}`, id))
          wanted.scopes?.forEach((e, j) => checkBot(`accounts.${i}.scopes.${j}.bot_id`, e.bot_id))
          const changes = wanted.scopes === undefined
            ? changesOf(accountOf(account), wanted, ConfigDocument.accountFields)
            : changesOf(
              { ...accountOf(account), scopes: account.scopes },
              { ...wanted, scopes: wanted.scopes.map(Scope.normalize) },
              ConfigDocument.scopedAccountFields
            )
          if (isEmpty(changes)) return
          const entry = { op: "update" as const, kind: "account" as const, id: account.id, changes }
          steps.push({
            entry,
            apply: Effect.as(accounts.update({ id: account.id, ...pick<Omit<AccountUpdate, "id">>(changes, 1) }), entry),
            undo: accounts.update({ id: account.id, ...pick<Omit<AccountUpdate, "id">>(changes, 0) })
          })
        })
      }

      if (document.keys !== undefined) {
        issues.push(...duplicates("keys", document.keys.map((k) => k.id)))
        const byId = new Map(state.keys.map((k) => [k.id, k]))
        document.keys.forEach((wanted, i) => {
          const key = byId.get(wanted.id)
          if (key === undefined) {
            issues.push({ path: `keys.${i}.id`, message: `API key ${wanted.id} does not exist; an import never creates keys` })
            return
          }
          const fixed = wanted.scopes === undefined
            ? changesOf(key, wanted, ["name", "role", "bot_ids"])
            : changesOf(key, { ...wanted, scopes: wanted.scopes.map(Scope.normalize) }, ["name", "role", "scopes"])
          for (const field of Object.keys(fixed)) {
            issues.push({
              path: `keys.${i}.${field}`,
              message: `an import cannot change a key's ${field}; only enabled (create a new key instead)`
            })
          }
          const changes = changesOf(key, wanted, ["enabled"])
          if (isEmpty(changes)) return
          const entry = { op: "update" as const, kind: "key" as const, id: key.id, changes }
          steps.push({ entry, apply: Effect.as(keys.toggle(key.id), entry), undo: keys.toggle(key.id) })
        })
      }

      if (document.routes !== undefined) {
        issues.push(...duplicates("routes", document.routes.map((r) => r.id)))
        const byId = new Map(state.routes.map((r) => [r.id, r]))
        const listed = new Set(document.routes.map((r) => r.id))
        if (prune) {
          for (const route of state.routes.filter((r) => !listed.has(r.id))) {
            const entry = {
              op: "delete" as const,
              kind: "route" as const,
              id: route.id,
              changes: all(routeOf(route), ConfigDocument.routeFields, "old")
            }
            steps.push({ entry, apply: Effect.as(routes.remove(route.id), entry), undo: routes.add(routeOf(route)) })
          }
        }
        document.routes.forEach((given, i) => {
          checkBot(`routes.${i}.source_bot_id`, given.source_bot_id)
          checkBot(`routes.${i}.target_bot_id`, given.target_bot_id)
          const condition = normalizeCondition(given.condition_type, given.condition_value)
          const wanted = { ...given, condition_value: condition._tag === "Right" ? condition.value : given.condition_value }
          const route = byId.get(wanted.id)
          if (route === undefined) {
            const entry = {
              op: "add" as const,
              kind: "route" as const,
              id: wanted.id,
              changes: all(wanted, ConfigDocument.routeFields, "new")
            }
            let added = 0
            steps.push({
              entry,
              apply: Effect.map(routes.add(wanted), (r) => {
                added = r.id
                return { ...entry, id: r.id }
              }),
              undo: Effect.suspend(() => routes.remove(added))
            })
            return
          }
          const changes = changesOf(routeOf(route), wanted, ConfigDocument.routeFields)
          if (isEmpty(changes)) return
          const entry = { op: "update" as const, kind: "route" as const, id: route.id, changes }
          steps.push({ entry, apply: Effect.as(routes.update(wanted), entry), undo: routes.update(routeOf(route)) })
        })
      }

      if (document.tags !== undefined) {
        issues.push(...duplicates("tags", document.tags.map((t) => t.id)))
        const byId = new Map(state.tags.map((t) => [t.id, t]))
        const byKey = new Map(state.tags.map((t) => [tagKey(t), t]))
        const matched = new Set<number>()
        const wantedTags: Array<{ readonly wanted: ConfigDocument.ConfigTag; readonly tag: Tag | undefined }> = []
        document.tags.forEach((wanted, i) => {
          checkBot(`tags.${i}.bot_id`, wanted.bot_id)
          const tag = byId.get(wanted.id) ?? byKey.get(tagKey(wanted))
          if (tag !== undefined && tagKey(tag) !== tagKey(wanted)) {
            issues.push({
              path: `tags.${i}`,
              message: `tag ${tag.id}'s bot_id, chat_id, user_id and tag cannot change; give the new tag another id`
            })
            return
          }
          if (tag !== undefined) {
            if (matched.has(tag.id)) issues.push({ path: `tags.${i}`, message: `tag ${tag.id} is listed twice` })
            matched.add(tag.id)
          }
          wantedTags.push({ wanted, tag })
        })
        if (prune) {
          for (const tag of state.tags.filter((t) => !matched.has(t.id))) {
            const entry = {
              op: "delete" as const,
              kind: "tag" as const,
              id: tag.id,
              changes: all(tagOf(tag), ["bot_id", "chat_id", "user_id", "username", "tag", "color"], "old")
            }
            steps.push({ entry, apply: Effect.as(tags.remove(tag.id), entry), undo: tags.add(tag) })
          }
        }
        for (const { tag, wanted } of wantedTags) {
          if (tag === undefined) {
            const entry = {
              op: "add" as const,
              kind: "tag" as const,
              id: wanted.id,
              changes: all(wanted, ["bot_id", "chat_id", "user_id", "username", "tag", "color"], "new")
            }
            let added = 0
            steps.push({
              entry,
              apply: Effect.map(tags.add(wanted), (t) => {
                added = t.id
                return { ...entry, id: t.id }
              }),
              undo: Effect.suspend(() => tags.remove(added))
            })
            continue
          }
          const changes = changesOf(tag, wanted, ["username", "color"])
          if (isEmpty(changes)) continue
          const entry = { op: "update" as const, kind: "tag" as const, id: tag.id, changes }
          steps.push({ entry, apply: Effect.as(tags.add(wanted), entry), undo: tags.add(tag) })
        }
      }
      return { issues, steps }
    })

  /** Makes every step, in order; when one fails, takes back those made, newest first, and fails with its error. */
  const applyAll = (steps: ReadonlyArray<Step>) =>
    Effect.gen(function*() {
      const done: Array<ConfigDocument.DiffEntry> = []
      for (const [i, step] of steps.entries()) {
        const made = yield* Effect.either(step.apply)
        if (made._tag === "Right") {
          done.push(made.right)
          continue
        }
        for (const earlier of steps.slice(0, i).reverse()) {
          yield* earlier.undo.pipe(
            Effect.catchAllCause((cause) => Effect.logError("could not take back a change of a failed import", cause))
          )
        }
        return yield* Effect.fail(made.left)
      }
      return done
    })

  const importDocument = (document: ConfigDocument.ConfigDocument, options: ImportOptions) =>
    oneAtATime(Effect.gen(function*() {
      const revision = yield* settings.readConfigRevision
      if (document.revision !== revision) {
        return yield* new ConfigDocument.RevisionMoved({ document: document.revision, current: revision })
      }
      const { issues, steps } = yield* plan(document, options.prune)
      if (issues.length > 0) return yield* new InvalidInput({ details: issues })
      if (options.dryRun) return { revision, diff: steps.map((s) => s.entry) }
      const diff = yield* ConfigRevision.asOneChange(settings, applyAll(steps), (done) => done.length > 0)
      return { revision: yield* settings.readConfigRevision, diff }
    })).pipe(Effect.withSpan("Configuration.import", { attributes: { dry_run: options.dryRun, prune: options.prune } }))

  return Configuration.of({ export: exportDocument, import: importDocument })
})

/** The service on the services that own each part of the configuration. */
export const layer: Layer.Layer<
  Configuration,
  never,
  Bots | Routes | Tags | ApiKeys | Accounts | LlmSettings | SettingsStore
> = Layer.effect(Configuration, make)
