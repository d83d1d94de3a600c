import { RE2JS } from "re2js"

/** How many UTF-16 code units of a message a route regex sees. */
export const textLimit = 4096

/** The longest pattern a regex route may have, in characters. */
export const maxPatternLength = 1000

/**
 * The largest RE2 program one route regex may compile to. Matching costs at most about this many steps per
 * character of the message, so this bounds the time one regex can hold the event loop.
 */
export const maxProgramSize = 64

/** The most RE2 program size the enabled regex routes of one source bot may have in all. */
export const maxTotalProgramSize = 1000

/** A route regex ready to run, with its program size (its cost on a message). */
export interface Compiled {
  readonly _tag: "Compiled"
  readonly regex: RE2JS
  readonly cost: number
}

/** Why a pattern is not accepted as a route regex: a sentence to put after "condition_value: ". */
export interface Refused {
  readonly _tag: "Refused"
  readonly reason: string
}

const syntax = "route regexes use RE2 syntax, see docs/routing.md"

/** What RE2 cannot do, recognised from the fragment its parser stopped at. */
const unsupported = (fragment: string): string | undefined => {
  if (fragment.startsWith("(?<=") || fragment.startsWith("(?<!")) return "lookbehind (?<=...) or (?<!...) is not supported"
  if (fragment.startsWith("(?=") || fragment.startsWith("(?!")) return "lookahead (?=...) or (?!...) is not supported"
  if (/^\\(?:[1-9]|k)/.test(fragment)) return "backreferences (\\1, \\k<name>) are not supported"
  if (fragment.startsWith("\\u")) return "\\u escapes are not supported (write \\x{263A} for a code point)"
  if (/^\\[pP]\{\w+=/.test(fragment)) {
    return "Unicode properties are written without a key (\\p{Cyrillic}, \\p{Lu}, not \\p{Script=Cyrillic})"
  }
  return undefined
}

const describe = (e: unknown): string => {
  const message = e instanceof Error ? e.message : String(e)
  const fragment = /`([^]*)`$/.exec(message)?.[1]
  return (fragment === undefined ? undefined : unsupported(fragment)) ??
    `it is not a valid regular expression (${message.replace(/^error parsing regexp: /, "")})`
}

/**
 * Compiles a route regex with RE2 (linear time, case-sensitive unless the pattern says `(?i)`), or says
 * why it is refused: a syntax RE2 does not have, a pattern longer than `maxPatternLength`, or a program
 * larger than `maxProgramSize`.
 */
export const compile = (pattern: string): Compiled | Refused => {
  if (pattern.length > maxPatternLength) {
    return { _tag: "Refused", reason: `a regex may be at most ${maxPatternLength} characters long` }
  }
  let regex: RE2JS
  try {
    regex = RE2JS.compile(pattern)
  } catch (e) {
    return { _tag: "Refused", reason: `${describe(e)}; ${syntax}` }
  }
  const cost = regex.programSize()
  if (cost > maxProgramSize) {
    return {
      _tag: "Refused",
      reason: `the regex is too large (RE2 program size ${cost}, at most ${maxProgramSize}); ` +
        "shorten counted repetitions such as {0,500} or split it into several routes"
    }
  }
  return { _tag: "Compiled", regex, cost }
}

/** What a pattern costs on each message: its program size, or 0 when it does not compile (it never runs). */
export const cost = (pattern: string): number => {
  const compiled = compile(pattern)
  return compiled._tag === "Compiled" ? compiled.cost : 0
}

/** Whether the regex matches somewhere in the first `textLimit` code units of the text. */
export const test = (compiled: Compiled, text: string): boolean =>
  compiled.regex.test(text.length > textLimit ? capped(text) : text)

const capped = (text: string) => {
  const code = text.charCodeAt(textLimit - 1)
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? textLimit - 1 : textLimit)
}
