import { createInterface } from "node:readline"
import { Writable } from "node:stream"

/** The first line of stdin ("" when it ends without one), without its line break. */
export const readLine = (): Promise<string> =>
  new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin, terminal: false })
    let line: string | undefined
    lines.once("line", (first) => {
      line = first
      lines.close()
    })
    lines.once("close", () => resolve(line ?? ""))
  })

/** Asks on stderr and reads an answer from the terminal without echoing it; Ctrl-C exits with 130. */
export const hidden = (question: string): Promise<string> =>
  new Promise((resolve) => {
    const muted = new Writable({ write: (_chunk, _encoding, callback) => callback() })
    const answer = createInterface({ input: process.stdin, output: muted, terminal: true })
    answer.on("SIGINT", () => {
      answer.close()
      process.stderr.write("\n")
      process.exit(130)
    })
    process.stderr.write(question)
    answer.question("", (text) => {
      answer.close()
      process.stderr.write("\n")
      resolve(text)
    })
  })
