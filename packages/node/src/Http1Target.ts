import { HttpExchange } from "@botrelay/telegram"

/** A percent-encoded URL part decoded, or as it is when it does not decode. */
const decoded = (part: string) => {
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}

/** Where a call connects: one pool of connections per origin. */
export interface Origin {
  /** The pool's key: scheme, host, port and address policy, so a call never reuses a connection made under another policy. */
  readonly key: string
  readonly secure: boolean
  readonly host: string
  readonly port: number
  /** The `Host` header. */
  readonly authority: string
  readonly addresses: "public" | undefined
}

const originOf = (url: URL, addresses: "public" | undefined): Origin => {
  const secure = url.protocol === "https:"
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  const port = url.port === "" ? (secure ? 443 : 80) : Number(url.port)
  const key = `${url.protocol}//${url.host}${addresses === undefined ? "" : ` ${addresses}`}`
  return { key, secure, host, port, authority: url.host, addresses }
}

/** Where a call goes: its origin, the request target (path and query), and the URL's credentials as a header. */
export interface Target {
  readonly origin: Origin
  readonly path: string
  readonly authorization: string | undefined
}

/** How many origins and URLs `targetOf` keeps parsed: calls go to a few (Telegram, the bots' backends) over and over. */
const maxBases = 1024

/** The parsed origin of a URL, by scheme, credentials, host and port (and address policy). */
const bases = new Map<string, Omit<Target, "path">>()

/** A path and query `new URL` leaves as they are: nothing it would percent-encode, no fragment, no dot segment. */
const plainPath = /^\/[\w\-.~!$&'()*+,;=:@%/]*(?:\?[\w\-.~!$&()*+,;=:@%/?]*)?$/
const dotSegment = /\/\.|%2e/i

/** The URL parsed whole; an `HttpExchangeError` when it is not http(s). */
const parseTarget = (href: string, addresses: "public" | undefined): Target | HttpExchange.HttpExchangeError => {
  let url: URL
  try {
    url = new URL(href)
  } catch (cause) {
    return HttpExchange.invalidUrl(cause)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return HttpExchange.invalidUrl(undefined)
  return {
    origin: originOf(url, addresses),
    path: `${url.pathname}${url.search}`,
    authorization: url.username === "" && url.password === ""
      ? undefined
      : `Basic ${Buffer.from(`${decoded(url.username)}:${decoded(url.password)}`).toString("base64")}`
  }
}

/** The targets of URLs called before, by address policy and URL. */
const targets = { plain: new Map<string, Target>(), public: new Map<string, Target>() }

/**
 * Where a call goes; an `HttpExchangeError` when the URL is not http(s). A URL called before is looked up; else
 * its origin is parsed once and kept, a plain path taken as it is, anything else parsed with the whole URL.
 */
export const targetOf = (href: string, addresses: "public" | undefined): Target | HttpExchange.HttpExchangeError => {
  const known = addresses === undefined ? targets.plain : targets.public
  const target = known.get(href)
  if (target !== undefined) return target
  const parsed = parsedTarget(href, addresses)
  if (parsed instanceof HttpExchange.HttpExchangeError) return parsed
  if (known.size >= maxBases) known.clear()
  known.set(href, parsed)
  return parsed
}

const parsedTarget = (href: string, addresses: "public" | undefined): Target | HttpExchange.HttpExchangeError => {
  const scheme = href.indexOf("://")
  const slash = scheme === -1 ? -1 : href.indexOf("/", scheme + 3)
  const path = slash === -1 ? "" : href.slice(slash)
  if (!plainPath.test(path) || dotSegment.test(path)) return parseTarget(href, addresses)
  const authority = href.slice(0, slash)
  if (/[?#\\]/.test(authority)) return parseTarget(href, addresses)
  const key = addresses === undefined ? authority : `${addresses} ${authority}`
  let base = bases.get(key)
  if (base === undefined) {
    const parsed = parseTarget(`${authority}/`, addresses)
    if (parsed instanceof HttpExchange.HttpExchangeError) return parsed
    base = { origin: parsed.origin, authorization: parsed.authorization }
    if (bases.size >= maxBases) bases.clear()
    bases.set(key, base)
  }
  return { origin: base.origin, path, authorization: base.authorization }
}
