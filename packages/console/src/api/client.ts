import createClient, { type Middleware } from "openapi-fetch"
import type { components, paths } from "./schema"

/** The API's named schemas, generated from its OpenAPI document (the http package's HttpApi contract). */
export type Schemas = components["schemas"]
export type Account = Schemas["Account"]
export type ApiKey = Schemas["ApiKey"]
export type AuditEntry = Schemas["AuditEntry"]
export type Bot = Schemas["Bot"]
export type Chat = Schemas["Chat"]
export type Delivery = Schemas["Delivery"]
export type Message = Schemas["Message"]
export type Person = Schemas["Person"]
export type Route = Schemas["Route"]
export type Tag = Schemas["Tag"]

/** One problem the API found in a request: the field (`path`) and its sentence. */
export interface Issue {
  readonly path: string
  readonly message: string
}

/** An API error answer, `{ error, code, details? }`, or a network failure (status 0). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ReadonlyArray<Issue> = []
  ) {
    super(message)
  }

  /** The API's sentence for a field, if it named that field (`details[].path`, or an error naming it). */
  fieldMessage(field: string): string | undefined {
    return this.details.find((d) => d.path === field || d.path.split(".").at(-1) === field)?.message
  }
}

/** The folder the console is served from (`/`, or the embed prefix), with a trailing slash. */
export const basePath = new URL(document.baseURI).pathname.replace(/\/?$/, "/")

let csrfToken: string | undefined

/** Remembers the session's CSRF token, sent with every request that changes something. */
export const setCsrfToken = (token: string | undefined) => {
  csrfToken = token
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== "GET" && request.method !== "HEAD" && csrfToken !== undefined) {
      request.headers.set("X-CSRF-Token", csrfToken)
    }
    return request
  }
}

/** The typed client of `/api`, on the session cookie. */
export const api = createClient<paths>({ baseUrl: basePath.replace(/\/$/, ""), credentials: "same-origin" })
api.use(csrf)

const asIssues = (value: unknown): ReadonlyArray<Issue> =>
  Array.isArray(value)
    ? value.flatMap((d: unknown) =>
      typeof d === "object" && d !== null && typeof (d as Issue).message === "string"
        ? [{ path: String((d as Issue).path ?? ""), message: (d as Issue).message }]
        : []
    )
    : []

/** An API answer that failed, as an ApiFailure. */
export const failureOf = (status: number, body: unknown): ApiFailure => {
  const error = typeof body === "object" && body !== null ? body as Record<string, unknown> : {}
  return new ApiFailure(
    status,
    typeof error.code === "string" ? error.code : "http_" + status,
    typeof error.error === "string" ? error.error : `HTTP ${status}`,
    asIssues(error.details)
  )
}

/** The data of an openapi-fetch answer, or its ApiFailure thrown (a network failure too). */
export const unwrap = async <T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>
): Promise<T> => {
  let answer: { data?: T; error?: unknown; response: Response }
  try {
    answer = await call
  } catch (e) {
    throw new ApiFailure(0, "network", e instanceof Error ? e.message : String(e))
  }
  if (!answer.response.ok) throw failureOf(answer.response.status, answer.error)
  return answer.data as T
}

/** A URL under the console's base, e.g. for `/api/media` in an `<img src>`. */
export const href = (path: string) => basePath + path.replace(/^\//, "")
