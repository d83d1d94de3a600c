import { Either } from "effect"

/**
 * The full-text query language of `GET /api/search` (`q`): words separated by spaces, all of which must
 * match; `"a phrase"` matches its words in order; a trailing `*` (`deliv*`, `"good morn"*`) matches any word
 * that starts with what comes before it. Every other character is text: an engine's operators (`AND`, `OR`,
 * `NOT`, `NEAR`, `-`, `^`, `:`, `(`, `)`, `+`, ...) are never interpreted. Matching is case- and
 * diacritic-insensitive; punctuation separates words as it does in the indexed text.
 */

/** One thing to look for: a word, or a phrase of words in order. */
export interface Term {
  /** The text as the user wrote it, without quotes or the trailing `*`; never contains `"`. */
  readonly text: string
  /** Written in quotes. */
  readonly phrase: boolean
  /** Ended with `*`: the last word of `text` is a prefix. */
  readonly prefix: boolean
}

/** A parsed query: every term must match. Never empty. */
export type Terms = readonly [Term, ...Array<Term>]

/** The longest `q`, in characters (code points) after trimming. */
export const maxLength = 256

const separator = /\s/u
const control = /\p{Cc}/gu
const searchable = /[\p{L}\p{N}]/u

/**
 * Parses `q`; the failure is a sentence naming the problem, in the API's words: empty `q`, `q` over
 * `maxLength`, an unbalanced `"`, or nothing to search for (no letter or digit). Terms without a letter or
 * digit (`-`, `**`, an emoji) match nothing by themselves and are left out; control characters separate words.
 */
export const parse = (q: string): Either.Either<Terms, string> => {
  const input = q.replace(control, " ").trim()
  if (input === "") return Either.left("q must not be empty: give a word, a \"phrase\" or a prefix*")
  if ([...input].length > maxLength) return Either.left(`q must be at most ${maxLength} characters`)
  const terms: Array<Term> = []
  let i = 0
  while (i < input.length) {
    const c = input[i]!
    if (separator.test(c)) {
      i++
    } else if (c === "\"") {
      const end = input.indexOf("\"", i + 1)
      if (end < 0) return Either.left("q has a \" that is not closed: phrases are written \"like this\"")
      let next = end + 1
      while (input[next] === "*") next++
      terms.push({ text: input.slice(i + 1, end), phrase: true, prefix: next > end + 1 })
      i = next
    } else {
      let end = i
      while (end < input.length && input[end] !== "\"" && !separator.test(input[end]!)) end++
      const word = input.slice(i, end)
      const text = word.replace(/\*+$/, "")
      terms.push({ text, phrase: false, prefix: text.length < word.length })
      i = end
    }
  }
  const [first, ...rest] = terms.filter((term) => searchable.test(term.text))
  if (first === undefined) return Either.left("q must contain a letter or a digit to search for")
  return Either.right([first, ...rest])
}
