import type { Scope } from "effect"
import { Context, Effect, Layer, Queue } from "effect"
import { botsOf, Events } from "./Events.js"
import type { StorageError } from "../domain/Errors.js"
import { yieldToEventLoop } from "../internal/EventLoop.js"
import type { Route } from "../domain/Route.js"
import * as RouteRegex from "../internal/RouteRegex.js"
import { RouteStore } from "../stores/RouteStore.js"

/** One incoming message or channel post, as routes see it. */
export interface Incoming {
  /** The text, or the caption of media; "" when there is none. */
  readonly text: string
  readonly chat_id: number
  /** The sender; 0 for a channel post without one. */
  readonly user_id: number
}

/** A message's text as conditions read it, each form computed once and only when needed. */
interface Text {
  /** The text in Unicode normal form C. */
  readonly nfc: () => string
  /** Whether the text has this word (case-folded, see `fold`). */
  readonly hasWord: (word: string) => boolean
}

type Condition =
  | { readonly _tag: "Test"; readonly test: (message: Incoming, text: Text) => boolean }
  | { readonly _tag: "Llm" }

interface CompiledRoute {
  readonly route: Route
  readonly condition: Condition
  /** The RE2 program size of a regex condition; 0 for the other conditions. */
  readonly cost: number
}

/**
 * A regex route that never matches: its stored pattern is no longer accepted, or the bot's earlier regex
 * routes already use up `RouteRegex.maxTotalProgramSize`.
 */
export interface Rejected {
  readonly route: Route
  readonly reason: string
}

/** A source bot's enabled routes in id order with their conditions compiled; build it once per route set. */
export interface Compiled {
  readonly routes: ReadonlyArray<CompiledRoute>
  readonly rejected: ReadonlyArray<Rejected>
}

/** What a message's routes decide, before the LLM is asked. */
export interface Matched {
  /**
   * Routes with a rule condition (all, chat_id, user_id, keyword, regex) that match, in id order.
   * When one of them has action drop it is the last: routes after it in id order are not evaluated.
   */
  readonly fired: ReadonlyArray<Route>
  /**
   * The llm routes to offer the model, in id order: those before the first matching drop route
   * (all of them when nothing drops), and none when the message has no text.
   */
  readonly llmCandidates: ReadonlyArray<Route>
  /** A matching rule route has action drop: keep the update from the backend and the long-poll buffer. */
  readonly dropped: boolean
}

/** The routes that fire once the model has chosen among the llm candidates. */
export interface Resolved {
  /** In id order, ending at the first drop route among them. */
  readonly fired: ReadonlyArray<Route>
  readonly dropped: boolean
}

const unspaced = "\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}\\p{sc=Thai}\\p{sc=Lao}\\p{sc=Khmer}\\p{sc=Myanmar}"
const word = `(?![${unspaced}])[\\p{L}\\p{N}\\p{M}]`
const isWord = new RegExp(`^${word}$`, "u")
const syntax = /[\\^$.*+?()[\]{}|/]/g

const phrase = (keyword: string) => {
  const chars = [...keyword]
  const body = keyword.split(/\s+/u).map((part) => part.replace(syntax, "\\$&")).join("\\s+")
  const before = isWord.test(chars[0] ?? "") ? `(?<!${word})` : ""
  const after = isWord.test(chars.at(-1) ?? "") ? `(?!${word})` : ""
  return `${before}${body}${after}`
}

/**
 * A matcher for comma-separated keywords: case-insensitive, on NFC text, each keyword a phrase (inner
 * spaces match any whitespace) that must not continue a word at an end that is itself a word character.
 * Word characters are Unicode letters, digits and marks, except in scripts written without spaces
 * (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar), where keywords match anywhere.
 */
const keywordPattern = (value: string): RegExp | undefined => {
  const keywords = value.split(",").map((k) => k.trim().normalize("NFC")).filter((k) => k !== "")
  return keywords.length === 0 ? undefined : new RegExp(keywords.map(phrase).join("|"), "iu")
}

/** Characters whose case folding (which `iu` regexes use) differs from their lowercase form. */
const foldings: Readonly<Record<string, string>> = {
  "\u00b5": "\u03bc",
  "\u017f": "s",
  "\u0345": "\u03b9",
  "\u03c2": "\u03c3",
  "\u03d0": "\u03b2",
  "\u03d1": "\u03b8",
  "\u03d5": "\u03c6",
  "\u03d6": "\u03c0",
  "\u03f0": "\u03ba",
  "\u03f1": "\u03c1",
  "\u03f5": "\u03b5",
  "\u1e9b": "\u1e61",
  "\u1fbe": "\u03b9"
}
// eslint-disable-next-line no-misleading-character-class -- a set of single code points (some combining, like U+0345), each folded alone
const foldable = new RegExp(`[${Object.keys(foldings).join("")}]`, "gu")

/** Lowercase, with the few characters whose case folding differs mapped as folding maps them. */
const fold = (text: string) => text.toLowerCase().replace(foldable, (c) => foldings[c]!)

const words = new RegExp(`(?:${word})+`, "gu")
const wholeWord = new RegExp(`^(?:${word})+$`, "u")

/**
 * The words one of which a text must have for the keywords to match it: the folded first word of each
 * keyword. Undefined when a keyword does not start with a whole word (it starts with punctuation or a
 * script written without spaces), so the keywords' pattern must always be tried.
 */
const keywordWords = (value: string): ReadonlyArray<string> | undefined => {
  const firsts: Array<string> = []
  for (const keyword of value.split(",")) {
    const trimmed = keyword.trim().normalize("NFC")
    if (trimmed === "") continue
    const first = fold(trimmed.split(/\s+/u)[0]!)
    if (!wholeWord.test(first)) return undefined
    firsts.push(first)
  }
  return firsts
}

/** The text view of a message. */
const textOf = (message: Incoming): Text => {
  let normalized: string | undefined
  let found: Set<string> | undefined
  const nfc = () => (normalized ??= message.text.normalize("NFC"))
  return { nfc, hasWord: (w) => (found ??= new Set(fold(nfc()).match(words))).has(w) }
}

const ids = (value: string) => new Set(value.split(",").map((s) => Number(s.trim())))

const never: Condition = { _tag: "Test", test: () => false }

const regexCondition = (route: Route, budget: number): CompiledRoute | Rejected => {
  const compiled = RouteRegex.compile(route.condition_value)
  if (compiled._tag === "Refused") return { route, reason: compiled.reason }
  if (compiled.cost > budget) {
    return {
      route,
      reason: `the bot's enabled regex routes before it already use ` +
        `${RouteRegex.maxTotalProgramSize - budget} of ${RouteRegex.maxTotalProgramSize} program size in all`
    }
  }
  return { route, condition: { _tag: "Test", test: (m) => RouteRegex.test(compiled, m.text) }, cost: compiled.cost }
}

/** Compiles the enabled routes among these (normally one source bot's), in id order. */
export const compile = (routes: ReadonlyArray<Route>): Compiled => {
  const compiled: Array<CompiledRoute> = []
  const rejected: Array<Rejected> = []
  const rule = (route: Route, test: (message: Incoming, text: Text) => boolean) =>
    compiled.push({ route, condition: { _tag: "Test", test }, cost: 0 })
  let budget = RouteRegex.maxTotalProgramSize
  for (const route of [...routes].filter((r) => r.enabled).sort((a, b) => a.id - b.id)) {
    switch (route.condition_type) {
      case "all":
        rule(route, () => true)
        break
      case "chat_id": {
        const chats = ids(route.condition_value)
        rule(route, (m) => chats.has(m.chat_id))
        break
      }
      case "user_id": {
        const users = ids(route.condition_value)
        rule(route, (m) => m.user_id !== 0 && users.has(m.user_id))
        break
      }
      case "keyword": {
        const re = keywordPattern(route.condition_value)
        const needed = keywordWords(route.condition_value)
        rule(route, (_, text) => re !== undefined && (needed === undefined || needed.some(text.hasWord)) && re.test(text.nfc()))
        break
      }
      case "regex": {
        const condition = regexCondition(route, budget)
        if ("reason" in condition) {
          rejected.push(condition)
          compiled.push({ route, condition: never, cost: 0 })
        } else {
          budget -= condition.cost
          compiled.push(condition)
        }
        break
      }
      case "llm":
        compiled.push({ route, condition: { _tag: "Llm" }, cost: 0 })
        break
    }
  }
  return { routes: compiled, rejected }
}

/**
 * Regex work done since the event loop last ran, in RE2 program size. Share one across the messages of a
 * batch so that `matches` yields between them too.
 */
export interface Stretch {
  spent: number
}

/** A stretch with nothing spent yet. */
export const stretch = (): Stretch => ({ spent: 0 })

/**
 * Evaluates a message against compiled routes in id order. Every matching rule route fires; a
 * matching drop route stops evaluation (later rule and llm routes are skipped) and drops the update.
 * Before a regex that would take the stretch past `RouteRegex.maxProgramSize` it lets the event loop run,
 * so no stretch of matching holds it longer than one regex of the largest size accepted.
 */
export const matches = (compiled: Compiled, message: Incoming, pace: Stretch = stretch()): Effect.Effect<Matched> =>
  Effect.suspend(() => {
    const fired: Array<Route> = []
    const llmCandidates: Array<Route> = []
    const hasText = message.text.trim() !== ""
    const text = textOf(message)
    const from = (start: number): Effect.Effect<Matched> => {
      for (let i = start; i < compiled.routes.length; i++) {
        const { condition, cost, route } = compiled.routes[i]!
        if (condition._tag === "Llm") {
          if (hasText) llmCandidates.push(route)
          continue
        }
        if (pace.spent > 0 && pace.spent + cost > RouteRegex.maxProgramSize) {
          pace.spent = 0
          return Effect.zipRight(yieldToEventLoop, Effect.suspend(() => from(i)))
        }
        pace.spent += cost
        if (!condition.test(message, text)) continue
        fired.push(route)
        if (route.action === "drop") return Effect.succeed({ fired, llmCandidates, dropped: true })
      }
      return Effect.succeed({ fired, llmCandidates, dropped: false })
    }
    return from(0)
  })

/**
 * Merges the llm candidates the model chose (other ids are ignored) into the fired routes at their
 * id positions; a chosen llm route with action drop cuts off the routes after it, like a rule route.
 */
export const resolve = (matched: Matched, chosen: Iterable<number>): Resolved => {
  const picked = new Set(chosen)
  const all = [...matched.fired, ...matched.llmCandidates.filter((r) => picked.has(r.id))].sort((a, b) => a.id - b.id)
  const cut = all.findIndex((r) => r.action === "drop")
  return cut === -1 ? { fired: all, dropped: false } : { fired: all.slice(0, cut + 1), dropped: true }
}

/** Compiled routes per source bot, kept in memory and reloaded after routes or bots change. */
export interface RouteSetsService {
  /** The bot's routes, loaded from storage on first use after a change. */
  readonly get: (botId: number) => Effect.Effect<RouteSet, StorageError>
}

/** A bot's routes as routing uses them. */
export interface RouteSet {
  /** The routes the bot is the source of. */
  readonly compiled: Compiled
  /** Ids of the enabled routes whose target is the bot: the routes replies may travel back on. */
  readonly inbound: ReadonlySet<number>
}

/** Compiled routes per source bot, kept in memory and reloaded after routes or bots change. */
export class RouteSets extends Context.Tag("@botrelay/core/RouteSets")<RouteSets, RouteSetsService>() {}

/** Builds the cache; it follows `BotChanged` and `RoutesChanged` events while the scope is open. */
export const make: Effect.Effect<RouteSetsService, never, RouteStore | Events | Scope.Scope> = Effect.gen(
  function*() {
    const routeStore = yield* RouteStore
    const changes = yield* (yield* Events).subscribe("BotChanged", "RoutesChanged")
    const cache = new Map<number, RouteSet>()
    const reported = new Set<string>()
    let generation = 0

    /** Drops the sets a change made stale: those of the bots whose routes changed, all of them when a bot did. */
    const catchUp = Queue.takeAll(changes).pipe(
      Effect.map((pending) => {
        for (const event of pending) {
          if (event._tag === "BotChanged") {
            generation++
            return cache.clear()
          }
          if (event._tag !== "RoutesChanged") continue
          generation++
          for (const botId of botsOf(event)) cache.delete(botId)
        }
      })
    )

    const report = (rejected: ReadonlyArray<Rejected>) =>
      Effect.forEach(rejected, ({ reason, route }) => {
        const key = `${route.id}\u0000${route.condition_value}`
        if (reported.has(key)) return Effect.void
        reported.add(key)
        return Effect.logWarning(`route ${route.id} never matches: its regex is not accepted (${reason})`)
      }, { discard: true })

    const load = (botId: number) =>
      Effect.gen(function*() {
        const seen = generation
        const routes = yield* routeStore.listRoutes({ bot_id: botId })
        const set: RouteSet = {
          compiled: compile(routes.filter((r) => r.source_bot_id === botId)),
          inbound: new Set(routes.filter((r) => r.enabled && r.target_bot_id === botId).map((r) => r.id))
        }
        yield* report(set.compiled.rejected)
        if (seen === generation) cache.set(botId, set)
        return set
      })

    const routeSet = (botId: number) =>
      Effect.zipRight(catchUp, Effect.suspend(() => {
        const hit = cache.get(botId)
        return hit === undefined ? load(botId) : Effect.succeed(hit)
      }))

    return RouteSets.of({
      get: routeSet
    })
  }
)

/** The cache as a layer. */
export const layer: Layer.Layer<RouteSets, never, RouteStore | Events> = Layer.scoped(RouteSets, make)
