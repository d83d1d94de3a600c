/**
 * What an IP address is for: `public` (reachable on the internet) or one of the kinds a server-side
 * request must not reach on a stranger's behalf.
 */
export type Kind =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "unspecified"
  | "shared"
  | "multicast"
  | "reserved"

const parseV4 = (text: string): Uint8Array | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  const bytes = new Uint8Array(4)
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!
    if (!/^(?:0|[1-9]\d{0,2})$/.test(part)) return undefined
    const value = Number(part)
    if (value > 255) return undefined
    bytes[i] = value
  }
  return bytes
}

const parseV6 = (text: string): Uint8Array | undefined => {
  const zone = text.indexOf("%")
  const address = zone === -1 ? text : text.slice(0, zone)
  if (!/^[0-9A-Fa-f:.]+$/.test(address)) return undefined
  const halves = address.split("::")
  if (halves.length > 2) return undefined
  const groups = (half: string): Array<number> | undefined => {
    if (half === "") return []
    const out: Array<number> = []
    const pieces = half.split(":")
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!
      if (i === pieces.length - 1 && piece.includes(".")) {
        const v4 = parseV4(piece)
        if (v4 === undefined) return undefined
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!)
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(piece)) return undefined
        out.push(parseInt(piece, 16))
      }
    }
    return out
  }
  const head = groups(halves[0]!)
  const tail = halves.length === 2 ? groups(halves[1]!) : []
  if (head === undefined || tail === undefined) return undefined
  if (halves.length === 1 && head.length !== 8) return undefined
  if (halves.length === 2 && head.length + tail.length > 7) return undefined
  const all = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail]
  const bytes = new Uint8Array(16)
  all.forEach((group, i) => {
    bytes[2 * i] = group >> 8
    bytes[2 * i + 1] = group & 0xff
  })
  return bytes
}

/**
 * The bytes of an IP address (4 for IPv4, 16 for IPv6) from its text: dotted decimal, or IPv6 with
 * `::`, an embedded IPv4 tail and an optional `%zone`, with or without brackets. `undefined` for
 * anything else, host names included.
 */
export const parse = (text: string): Uint8Array | undefined => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  return bare.includes(":") ? parseV6(bare) : parseV4(bare)
}

const inV4 = (b: Uint8Array, prefix: ReadonlyArray<number>, bits: number): boolean => {
  let left = bits
  for (let i = 0; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff
    if ((b[i]! & mask) !== ((prefix[i] ?? 0) & mask)) return false
  }
  return true
}

const kindV4 = (b: Uint8Array): Kind => {
  if (inV4(b, [0], 8)) return "unspecified"
  if (inV4(b, [127], 8)) return "loopback"
  if (inV4(b, [10], 8) || inV4(b, [172, 16], 12) || inV4(b, [192, 168], 16)) return "private"
  if (inV4(b, [169, 254], 16)) return "link-local"
  if (inV4(b, [100, 64], 10)) return "shared"
  if (inV4(b, [224], 4)) return "multicast"
  if (
    inV4(b, [240], 4) || inV4(b, [192, 0, 0], 24) || inV4(b, [192, 0, 2], 24) || inV4(b, [192, 88, 99], 24) ||
    inV4(b, [198, 18], 15) || inV4(b, [198, 51, 100], 24) || inV4(b, [203, 0, 113], 24)
  ) return "reserved"
  return "public"
}

const zeros = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((byte) => byte === 0)

/** Whether the first `bits` of the address are those of `prefix` (16-bit groups). */
const inV6 = (b: Uint8Array, prefix: ReadonlyArray<number>, bits: number): boolean =>
  inV4(b, prefix.flatMap((group) => [group >> 8, group & 0xff]), bits)

const kindV6 = (b: Uint8Array): Kind => {
  if (zeros(b, 0, 16)) return "unspecified"
  if (zeros(b, 0, 15) && b[15] === 1) return "loopback"
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return kindV4(b.subarray(12))
  if (zeros(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(b, 10, 12)) return kindV4(b.subarray(12))
  if (zeros(b, 0, 12)) return "reserved"
  if (inV6(b, [0x64, 0xff9b], 96)) return kindV4(b.subarray(12))
  if (inV6(b, [0x2002], 16)) return kindV4(b.subarray(2, 6))
  if (inV6(b, [0xfc00], 7) || inV6(b, [0xfec0], 10)) return "private"
  if (inV6(b, [0xfe80], 10)) return "link-local"
  if (inV6(b, [0xff00], 8)) return "multicast"
  if (inV6(b, [0x2001, 0x0db8], 32) || inV6(b, [0x2001], 23) || !inV6(b, [0x2000], 3)) return "reserved"
  return "public"
}

/**
 * What the address is (see `Kind`): IPv4-mapped, IPv4-translated, NAT64 and 6to4 IPv6 forms count as
 * the IPv4 address they carry; IPv6 outside global unicast, documentation and protocol ranges are
 * `reserved`. `undefined` when the text is not an IP address.
 */
export const kind = (text: string): Kind | undefined => {
  const bytes = parse(text)
  return bytes === undefined ? undefined : bytes.length === 4 ? kindV4(bytes) : kindV6(bytes)
}

/** Whether the text is an IP address that is public; false for host names. */
export const isPublic = (text: string): boolean => kind(text) === "public"

/** The same address in one spelling (dotted IPv4, or 8 lower-case hexadecimal groups), for comparing. */
export const canonical = (text: string): string | undefined => {
  const bytes = parse(text)
  if (bytes === undefined) return undefined
  if (bytes.length === 4) return bytes.join(".")
  if (zeros(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return bytes.subarray(12).join(".")
  const groups: Array<string> = []
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16))
  return groups.join(":")
}

/**
 * A URL's host as an IP address (brackets removed), or `undefined` for a host name. The WHATWG URL
 * parser has already turned `0x7f000001`, `2130706433` and `0177.0.0.1` into `127.0.0.1`.
 */
export const ofUrlHost = (hostname: string): string | undefined => {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname
  return parse(bare) === undefined ? undefined : bare
}

/** Names that always mean this host (RFC 6761): `localhost` and anything under `.localhost`. */
export const isLocalhostName = (hostname: string): boolean => {
  const name = hostname.toLowerCase().replace(/\.$/, "")
  return name === "localhost" || name.endsWith(".localhost")
}
