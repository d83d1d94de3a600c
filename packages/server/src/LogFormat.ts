import { Cause, HashMap, Logger, type LogLevel } from "effect"

/** How log lines are written: JSON objects, or readable lines. */
export type Format = "json" | "pretty"

/** `auto`: readable lines on a terminal (stdout a TTY), JSON lines otherwise. */
export const resolve = (format: "auto" | Format, isTTY: boolean = process.stdout.isTTY === true): Format =>
  format === "auto" ? (isTTY ? "pretty" : "json") : format

const levelName = (level: LogLevel.LogLevel) => level.label === "WARN" ? "warn" : level.label.toLowerCase()

const text = (message: unknown): string =>
  Array.isArray(message) ? message.map(text).join(" ") : typeof message === "string" ? message : String(message)

/** The fields of a request line, in the order lines show them; other annotations follow. */
const requestFields = ["method", "route", "status", "duration_ms", "actor", "request_id"]

const fields = (annotations: HashMap.HashMap<string, unknown>, cause: Cause.Cause<unknown>) => {
  const out: Record<string, unknown> = {}
  for (const key of requestFields) {
    const value = HashMap.get(annotations, key)
    if (value._tag === "Some") out[key] = value.value
  }
  for (const [key, value] of annotations) if (!(key in out)) out[key] = value
  if (!Cause.isEmpty(cause)) out.error = Cause.pretty(cause, { renderErrorCause: true })
  return out
}

/** One JSON object a line: `{time, level, msg, ...annotations}`, with `error` when there is a cause. */
export const json: Logger.Logger<unknown, string> = Logger.make(({ annotations, cause, date, logLevel, message }) =>
  JSON.stringify({ time: date.toISOString(), level: levelName(logLevel), msg: text(message), ...fields(annotations, cause) })
)

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

const clock = (date: Date) =>
  `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`

const shown = (value: unknown) => {
  const s = typeof value === "string" ? value : JSON.stringify(value)
  return /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s)
}

/**
 * Readable lines, local time: `HH:MM:SS.mmm INFO GET /api/bots 200 3.1ms key:3` for a request, else
 * `HH:MM:SS.mmm WARN message key=value ...`, the cause on the lines after.
 */
export const pretty: Logger.Logger<unknown, string> = Logger.make(({ annotations, cause, date, logLevel, message }) => {
  const { error, ...rest } = fields(annotations, cause)
  const head = `${clock(date)} ${logLevel.label}`
  const msg = text(message)
  const body = msg === "request" && "route" in rest
    ? [rest.method, rest.route, rest.status, `${text(rest.duration_ms)}ms`, rest.actor].map(text).join(" ")
    : [msg, ...Object.entries(rest).map(([k, v]) => `${k}=${shown(v)}`)].join(" ")
  return error === undefined ? `${head} ${body}` : `${head} ${body}\n${text(error)}`
})

/** The logger of a format, writing to the console (stdout). */
export const logger = (format: Format) => Logger.withConsoleLog(format === "json" ? json : pretty)
