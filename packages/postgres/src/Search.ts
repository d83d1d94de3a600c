import { Highlight, type SearchQuery } from "@botrelay/core"

/**
 * Full-text search words, made here rather than by a Postgres text search configuration so that they do not
 * depend on the database's locale and match SQLite's FTS5 (`unicode61 remove_diacritics 2`): a word is a run
 * of letters, digits, marks and private-use characters; it is compared in lower case without diacritics.
 * Messages carry their words as a tsvector (`vector`); a search is a tsquery of the terms' words (`query`);
 * the highlight marks the words that matched (`highlight`).
 */

/** A word of a text: where it is, and its form for comparison. */
export interface Word {
  readonly start: number
  readonly end: number
  readonly form: string
}

const wordPattern = /[\p{L}\p{N}\p{M}\p{Co}]+/gu
const marks = /\p{M}/gu

/** The form a word is compared in: lower case, diacritics removed. */
export const formOf = (word: string): string => word.toLowerCase().normalize("NFD").replace(marks, "").normalize("NFC")

/** The words of a text, in order. */
export const words = (text: string): Array<Word> => {
  const found: Array<Word> = []
  for (const match of text.matchAll(wordPattern)) {
    const form = formOf(match[0])
    if (form !== "") found.push({ start: match.index, end: match.index + match[0].length, form })
  }
  return found
}

/** Postgres refuses lexemes of 2 KB or more; such words are left out of the index (and match nothing). */
const maxLexemeBytes = 2046

const fits = (form: string) => Buffer.byteLength(form, "utf8") <= maxLexemeBytes

/** A tsvector or tsquery lexeme, quoted. */
const quote = (form: string) => `'${form.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`

/** Positions above this are stored as it; a lexeme keeps at most 256 positions. */
const maxPosition = 16383
const maxPositions = 256

/** The tsvector literal of a text's words, each at its position (1 up). */
export const vector = (text: string): string => {
  const positions = new Map<string, Array<number>>()
  words(text).forEach((word, i) => {
    if (!fits(word.form)) return
    const list = positions.get(word.form)
    const position = Math.min(i + 1, maxPosition)
    if (list === undefined) positions.set(word.form, [position])
    else if (list.length < maxPositions && list[list.length - 1] !== position) list.push(position)
  })
  return [...positions].map(([form, at]) => `${quote(form)}:${at.join(",")}`).join(" ")
}

/** The words of each term: a term matches its words in order, the last a prefix when the term is. */
export const termWords = (terms: SearchQuery.Terms): Array<{ readonly forms: Array<string>; readonly prefix: boolean }> =>
  terms.map((term) => ({ forms: words(term.text).map((w) => w.form), prefix: term.prefix }))

/**
 * The tsquery literal of the terms: each term's words as a phrase (`<->`), a prefix term's last word with
 * `:*`, terms ANDed. Undefined when some term cannot match (no word, or a word too long to be indexed).
 */
export const query = (terms: SearchQuery.Terms): string | undefined => {
  const phrases: Array<string> = []
  for (const term of termWords(terms)) {
    if (term.forms.length === 0 || !term.forms.every(fits)) return undefined
    phrases.push(
      `(${term.forms.map((form, i) => `${quote(form)}${term.prefix && i === term.forms.length - 1 ? ":*" : ""}`).join(" <-> ")})`
    )
  }
  return phrases.join(" & ")
}

/**
 * The text with each match of the terms in `Highlight` marks: every run of words that matches a term, runs
 * that overlap merged. The same words the index holds, so what was found is what is marked.
 */
export const highlight = (text: string, terms: SearchQuery.Terms): string => {
  const found = words(text)
  const spans: Array<[number, number]> = []
  for (const term of termWords(terms)) {
    const n = term.forms.length
    if (n === 0) continue
    for (let i = 0; i + n <= found.length; i++) {
      let matches = true
      for (let j = 0; j < n && matches; j++) {
        const form = found[i + j]!.form
        matches = term.prefix && j === n - 1 ? form.startsWith(term.forms[j]!) : form === term.forms[j]
      }
      if (matches) spans.push([found[i]!.start, found[i + n - 1]!.end])
    }
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  let marked = ""
  let at = 0
  let open: [number, number] | undefined
  const close = () => {
    if (open === undefined) return
    marked += Highlight.open + text.slice(open[0], open[1]) + Highlight.close
    at = open[1]
    open = undefined
  }
  for (const span of spans) {
    if (open !== undefined && span[0] < open[1]) {
      open[1] = Math.max(open[1], span[1])
      continue
    }
    close()
    marked += text.slice(at, span[0])
    at = span[0]
    open = [span[0], span[1]]
  }
  close()
  return marked + text.slice(at)
}
