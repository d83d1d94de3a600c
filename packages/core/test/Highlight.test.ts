import { assert, describe, it } from "@effect/vitest"
import { Highlight } from "@botrelay/core"

const { close, open, toHtml } = Highlight

describe("Highlight.toHtml", () => {
  it("escapes the text and wraps each marked match in <mark>", () => {
    assert.strictEqual(toHtml("say hello", `say ${open}hello${close}`), "say <mark>hello</mark>")
    assert.strictEqual(
      toHtml("<b>a</b> & \"b\" 'c'", `<b>${open}a${close}</b> & "b" 'c'`),
      "&lt;b&gt;<mark>a</mark>&lt;/b&gt; &amp; &quot;b&quot; &#39;c&#39;"
    )
    assert.strictEqual(toHtml("no match", "no match"), "no match")
    assert.strictEqual(toHtml("", ""), "")
  })

  it("tells the text's own private-use characters from the marks; the answer stays well-formed", () => {
    const text = `${open}hello${close} world ${close}x${open}`
    assert.strictEqual(toHtml(text, `${open}hello${close} ${open}world${close} ${close}x${open}`), `${open}hello${close} <mark>world</mark> ${close}x${open}`)
    const shifted = toHtml(text, `${open}${open}hello${close}${close} world ${close}x${open}`)
    assert.strictEqual(shifted.replace(/<\/?mark>/g, ""), text)
    assert.match(shifted, /^([^<]|<mark>[^<]*<\/mark>)*$/)
  })

  it("closes a mark left open and ignores unbalanced ones", () => {
    assert.strictEqual(toHtml("ab", `${open}a${open}b`), "<mark>ab</mark>")
    assert.strictEqual(toHtml("ab", `${close}a${close}b`), "ab")
  })

  it("returns the escaped text when the marked text is not the text with marks", () => {
    assert.strictEqual(toHtml("<a>", `${open}<b>${close}`), "&lt;a&gt;")
    assert.strictEqual(toHtml("abc", `${open}ab${close}`), "abc")
  })
})
