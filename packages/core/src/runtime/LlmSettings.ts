import type { Scope } from "effect"
import { Context, Effect, Layer, Option, Queue, Redacted, Schema, SynchronizedRef } from "effect"
import type { StorageError } from "../domain/Errors.js"
import { SettingsStore } from "../stores/SettingsStore.js"
import * as ConfigRevision from "./ConfigRevision.js"
import { Event, Events } from "./Events.js"

/** The LLM router's settings: where the OpenAI-compatible endpoint is, its key, its model, how long to wait. */
export interface Settings {
  /** The API root, e.g. `https://api.openai.com/v1`, without a trailing `/`; "" when unset. */
  readonly base_url: string
  /** "" when unset; then no `Authorization` header is sent. */
  readonly api_key: Redacted.Redacted<string>
  /** "" when unset. */
  readonly model: string
  readonly timeout_ms: number
}

/** Values the host fixes (the server's environment); they win over stored settings and cannot be changed. */
export type Overrides = Partial<Settings>

/** How long a call may take unless configured. */
export const defaultTimeoutMs = 10_000

/** The shortest and longest timeouts. */
const minTimeoutMs = 100
const maxTimeoutMs = 60_000

/** Whether the router may call the model: it needs an endpoint and a model (a key is optional). */
export const isConfigured = (settings: Settings): boolean => settings.base_url !== "" && settings.model !== ""

/** A key as the API shows it: `sk-…wxyz` (first 3 and last 4 characters), `***` when short, "" when unset. */
const maskKey = (key: Redacted.Redacted<string>): string => {
  const value = Redacted.value(key)
  if (value === "") return ""
  return value.length < 12 ? "***" : `${value.slice(0, 3)}…${value.slice(-4)}`
}

const isHttpUrl = (value: string): boolean => {
  if (!URL.canParse(value)) return false
  const protocol = new URL(value).protocol
  return protocol === "http:" || protocol === "https:"
}

/** `GET /api/llm`: the settings in effect, the key masked. */
export const LlmSettingsView = Schema.Struct({
  base_url: Schema.String,
  model: Schema.String,
  timeout_ms: Schema.Int,
  api_key: Schema.String,
  configured: Schema.Boolean,
  /** The settings the host's environment fixes: shown, never changed through the API. */
  fixed: Schema.Array(Schema.Literal("base_url", "api_key", "model", "timeout_ms"))
}).annotations({ identifier: "LlmSettings" })
export type LlmSettingsView = typeof LlmSettingsView.Type

/** `POST /api/llm`: a partial update; omitted fields keep their value. */
export const LlmSettingsUpdate = Schema.Struct({
  base_url: Schema.optionalWith(
    Schema.Trim.pipe(
      Schema.filter((s) => s === "" || isHttpUrl(s), {
        message: () => "base_url must be an absolute http or https URL, or \"\" to unset it"
      }),
      Schema.maxLength(2048, { message: () => "base_url must be at most 2048 characters" })
    ),
    { exact: true }
  ),
  api_key: Schema.optionalWith(
    Schema.Redacted(
      Schema.String.pipe(
        Schema.filter((s) => s.length <= 4096 && !/\s/.test(s), {
          message: () => "api_key must have no whitespace and at most 4096 characters; \"\" clears it"
        })
      )
    ),
    { exact: true }
  ),
  model: Schema.optionalWith(
    Schema.Trim.pipe(
      Schema.filter((s) => s.length >= 1 && s.length <= 256, {
        message: () => "model must be 1 to 256 characters"
      })
    ),
    { exact: true }
  ),
  timeout_ms: Schema.optionalWith(
    Schema.Int.pipe(
      Schema.filter((n) => n >= minTimeoutMs && n <= maxTimeoutMs, {
        message: () => `timeout_ms must be an integer from ${minTimeoutMs} to ${maxTimeoutMs}`
      })
    ),
    { exact: true }
  )
}).annotations({ identifier: "LlmSettingsUpdate" })
export type LlmSettingsUpdate = typeof LlmSettingsUpdate.Type

/** The update changes settings the host fixed (the server's environment). */
export class LlmSettingFixed extends Schema.TaggedError<LlmSettingFixed>()("LlmSettingFixed", {
  fields: Schema.Array(Schema.String)
}) {
  override get message() {
    return `${this.fields.join(", ")} ${this.fields.length === 1 ? "is" : "are"} set by the server's environment ` +
      "and cannot be changed through the API"
  }
}

/** Reads and changes the LLM router's settings. */
export interface LlmSettingsService {
  /** The settings in effect: fixed values, then stored ones, then defaults. */
  readonly get: Effect.Effect<Settings, StorageError>
  /** The settings in effect as the API shows them. */
  readonly view: Effect.Effect<LlmSettingsView, StorageError>
  /** Stores the given fields; fails when one of them is fixed by the host. */
  readonly update: (patch: LlmSettingsUpdate) => Effect.Effect<LlmSettingsView, LlmSettingFixed | StorageError>
  /** Whether `base_url` is fixed by the host (its environment) rather than set through the API. */
  readonly baseUrlFixed: boolean
}

/** The LLM router's settings. */
export class LlmSettings extends Context.Tag("@botrelay/core/LlmSettings")<LlmSettings, LlmSettingsService>() {}

const names = {
  base_url: "llm.base_url",
  api_key: "llm.api_key",
  model: "llm.model",
  timeout_ms: "llm.timeout_ms"
} as const

const fields = Object.keys(names) as Array<keyof typeof names>

const fromStored = (stored: Readonly<Record<string, string>>, overrides: Overrides): Settings => {
  const timeout = Number(stored[names.timeout_ms])
  return {
    base_url: overrides.base_url ?? stored[names.base_url] ?? "",
    api_key: overrides.api_key ?? Redacted.make(stored[names.api_key] ?? ""),
    model: overrides.model ?? stored[names.model] ?? "",
    timeout_ms: overrides.timeout_ms ??
      (Number.isInteger(timeout) && timeout >= minTimeoutMs && timeout <= maxTimeoutMs ? timeout : defaultTimeoutMs)
  }
}

/** The settings as the API shows them. */
const toView = (settings: Settings, fixed: Overrides): LlmSettingsView => ({
  base_url: settings.base_url,
  model: settings.model,
  timeout_ms: settings.timeout_ms,
  api_key: maskKey(settings.api_key),
  configured: isConfigured(settings),
  fixed: fields.filter((field) => fixed[field] !== undefined)
})

/** Builds the service on the `SettingsStore`; `overrides` (the host's environment) win and cannot be changed. */
export const make = (
  overrides: Overrides = {}
): Effect.Effect<LlmSettingsService, never, SettingsStore | Events | Scope.Scope> =>
  Effect.gen(function*() {
    const settingsStore = yield* SettingsStore
    const events = yield* Events
    const fixed: Overrides = {
      ...overrides,
      ...(overrides.base_url === undefined ? {} : { base_url: overrides.base_url.replace(/\/+$/, "") })
    }
    const cache = yield* SynchronizedRef.make(Option.none<Settings>())
    const changes = yield* events.subscribe("SettingsChanged")
    yield* Queue.take(changes).pipe(
      Effect.zipRight(SynchronizedRef.set(cache, Option.none())),
      Effect.forever,
      Effect.forkScoped
    )

    const get = SynchronizedRef.modifyEffect(cache, (cached) =>
      Option.isSome(cached)
        ? Effect.succeed([cached.value, cached] as const)
        : Effect.map(settingsStore.readSettings(Object.values(names)), (stored) => {
          const settings = fromStored(stored, fixed)
          return [settings, Option.some(settings)] as const
        }))

    const update = (patch: LlmSettingsUpdate) =>
      SynchronizedRef.modifyEffect(cache, () =>
        Effect.gen(function*() {
          const clash = fields.filter((field) => patch[field] !== undefined && fixed[field] !== undefined)
          if (clash.length > 0) return yield* new LlmSettingFixed({ fields: clash })
          const values: Record<string, string> = {}
          if (patch.base_url !== undefined) values[names.base_url] = patch.base_url.replace(/\/+$/, "")
          if (patch.api_key !== undefined) values[names.api_key] = Redacted.value(patch.api_key)
          if (patch.model !== undefined) values[names.model] = patch.model
          if (patch.timeout_ms !== undefined) values[names.timeout_ms] = String(patch.timeout_ms)
          yield* settingsStore.writeSettings(values)
          const settings = fromStored(yield* settingsStore.readSettings(Object.values(names)), fixed)
          return [toView(settings, fixed), Option.some(settings)] as const
        })).pipe(Effect.tap(() => events.publish(Event.SettingsChanged())), ConfigRevision.bumped(settingsStore))

    return { get, view: Effect.map(get, (settings) => toView(settings, fixed)), update, baseUrlFixed: fixed.base_url !== undefined }
  })

/** `LlmSettings` on the `SettingsStore`, with the host's fixed values. */
export const layer = (overrides: Overrides = {}): Layer.Layer<LlmSettings, never, SettingsStore | Events> =>
  Layer.scoped(LlmSettings, make(overrides))
