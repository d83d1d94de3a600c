/** The parameters of a call, by name: JSON values, or strings from a query string or a form. */
export type Params = Readonly<Record<string, unknown>>

/** A JSON object. */
export type Json = Record<string, unknown>

/** A safe integer, or the text of one; undefined otherwise. */
export const asInt = (value: unknown): number | undefined => {
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : undefined
  if (typeof value === "string" && /^\s*-?\d+\s*$/.test(value)) {
    const n = Number(value)
    return Number.isSafeInteger(n) ? n : undefined
  }
  return undefined
}

/** True for `true` and its texts (`"true"`, `"True"`, `"1"`). */
export const asBool = (value: unknown): boolean =>
  value === true || value === "true" || value === "True" || value === "1"

/** The value a JSON text holds (undefined when it does not parse); other values as they are. */
export const parseJson = (value: unknown): unknown => {
  if (typeof value !== "string") return value
  try {
    return JSON.parse(value)
  } catch {
    return undefined
  }
}

/** An object, or a JSON object in text; undefined otherwise. */
export const asObject = (value: unknown): Json | undefined => {
  const parsed = parseJson(value)
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : undefined
}

/** An array, or a JSON array in text; undefined otherwise. */
export const asArray = (value: unknown): ReadonlyArray<unknown> | undefined => {
  const parsed = parseJson(value)
  return Array.isArray(parsed) ? parsed : undefined
}

/** A string parameter; numbers and booleans become their text, anything else the empty string. */
export const asText = (value: unknown): string =>
  typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : ""

/** Whether a parameter is absent or empty. */
export const isEmpty = (value: unknown) => value === undefined || value === null || value === ""

/** `value` brought within `min` and `max`. */
export const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value))

/** The strings of an `allowed_updates` parameter, or undefined when it is not an array. */
export const allowedUpdates = (value: unknown): ReadonlyArray<string> | undefined =>
  asArray(value)?.filter((kind): kind is string => typeof kind === "string")
