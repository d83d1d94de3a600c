/**
 * Search highlights: a store marks each match in a message's text with `open` and `close` (characters of
 * Unicode's private use area), and `toHtml` turns the marked text into HTML: the text escaped, each match in
 * `<mark>…</mark>`. The marks are told apart from the text by comparing with the text itself, so a text that
 * contains those characters cannot forge or unbalance a mark; the answer is always well-formed.
 */

/** Put before each match by the store. */
export const open = "\uE000"

/** Put after each match by the store. */
export const close = "\uE001"

const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

/** `text` with `& < > " '` as HTML entities. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => entities[c]!)

/**
 * The HTML of `text` with the matches `marked` (the same text with `open` / `close` inserted) wraps in
 * `<mark>`. When `marked` is not `text` with marks inserted, the text comes back escaped and unmarked.
 */
export const toHtml = (text: string, marked: string): string => {
  let html = ""
  let inMark = false
  let t = 0
  let start = 0
  for (let m = 0; m < marked.length; m++) {
    const c = marked[m]
    if (t < text.length && c === text[t]) {
      t++
      continue
    }
    if (c !== open && c !== close) return escapeHtml(text)
    html += escapeHtml(text.slice(start, t))
    start = t
    if (c === open && !inMark) html += "<mark>"
    else if (c === close && inMark) html += "</mark>"
    inMark = c === open
  }
  if (t < text.length) return escapeHtml(text)
  html += escapeHtml(text.slice(start))
  return inMark ? `${html}</mark>` : html
}
