import type { AST } from "@eslint-community/regexpp"
import { RegExpParser } from "@eslint-community/regexpp"

/** How many UTF-16 code units of a message a route regex sees. */
export const textLimit = 4096

/** The flags route regexes are compiled with: Unicode mode, case-sensitive, no state between calls. */
export const flags = "u"

/** The most backtracking work, in the units of `cost`, a route regex may need on `textLimit` characters. */
const costLimit = 2 ** 27

type Ranges = ReadonlyArray<readonly [number, number]>

const maxCodePoint = 0x10ffff
const everything: Ranges = [[0, maxCodePoint]]
const nothing: Ranges = []
const digit: Ranges = [[0x30, 0x39]]
const word: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]]
const space: Ranges = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff]
]

const normalize = (ranges: Ranges): Ranges => {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0])
  const out: Array<[number, number]> = []
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1]
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi)
    else out.push([lo, hi])
  }
  return out
}

const union = (...sets: ReadonlyArray<Ranges>): Ranges => normalize(sets.flat())

const complement = (ranges: Ranges): Ranges => {
  const out: Array<[number, number]> = []
  let next = 0
  for (const [lo, hi] of normalize(ranges)) {
    if (lo > next) out.push([next, lo - 1])
    next = hi + 1
  }
  if (next <= maxCodePoint) out.push([next, maxCodePoint])
  return out
}

const intersects = (a: Ranges, b: Ranges) => a.some(([lo, hi]) => b.some(([lo2, hi2]) => lo <= hi2 && lo2 <= hi))

const escapeSet = (node: AST.CharacterSet): Ranges => {
  switch (node.kind) {
    case "any":
      return everything
    case "property":
      return everything
    default: {
      const base = node.kind === "digit" ? digit : node.kind === "word" ? word : space
      return node.negate ? complement(base) : base
    }
  }
}

type Disjunction = AST.Pattern | AST.Group | AST.CapturingGroup | AST.LookaroundAssertion

const isDisjunction = (node: AST.Node): node is Disjunction =>
  node.type === "Pattern" || node.type === "Group" || node.type === "CapturingGroup" ||
  (node.type === "Assertion" && (node.kind === "lookahead" || node.kind === "lookbehind"))

const memo = <A>(f: (node: AST.Node) => A) => {
  const seen = new WeakMap<AST.Node, A>()
  return (node: AST.Node): A => {
    const hit = seen.get(node)
    if (hit !== undefined) return hit
    const value = f(node)
    seen.set(node, value)
    return value
  }
}

/** Characters a node can consume anywhere in its match. */
const chars = memo((node): Ranges => {
  switch (node.type) {
    case "Character":
      return [[node.value, node.value]]
    case "CharacterSet":
      return escapeSet(node)
    case "CharacterClass": {
      if (node.negate && node.elements.some((e) => e.type === "CharacterSet" && e.kind === "property")) {
        return everything
      }
      const inner = union(...node.elements.map(chars))
      return node.negate ? complement(inner) : inner
    }
    case "CharacterClassRange":
      return [[node.min.value, node.max.value]]
    case "Quantifier":
      return chars(node.element)
    case "Alternative":
      return union(...node.elements.map(chars))
    case "Pattern":
    case "Group":
    case "CapturingGroup":
      return union(...node.alternatives.map(chars))
    case "Assertion":
      return nothing
    default:
      return everything
  }
})

/** Whether a node can match the empty string, and the characters it can start with. */
const first = memo((node): { readonly nullable: boolean; readonly set: Ranges } => {
  switch (node.type) {
    case "Quantifier": {
      const inner = first(node.element)
      return { nullable: node.min === 0 || inner.nullable, set: inner.set }
    }
    case "Alternative": {
      const sets: Array<Ranges> = []
      for (const element of node.elements) {
        const f = first(element)
        sets.push(f.set)
        if (!f.nullable) return { nullable: false, set: union(...sets) }
      }
      return { nullable: true, set: union(...sets) }
    }
    case "Pattern":
    case "Group":
    case "CapturingGroup": {
      const alternatives = node.alternatives.map(first)
      return { nullable: alternatives.some((a) => a.nullable), set: union(...alternatives.map((a) => a.set)) }
    }
    case "Assertion":
      return { nullable: true, set: nothing }
    default:
      return { nullable: false, set: chars(node) }
  }
})

/** Whether at most one alternative of a disjunction can go on at any character. */
const deterministic = (node: Disjunction) => {
  const starts = node.alternatives.map(first)
  if (starts.length > 1 && starts.some((s) => s.nullable)) return false
  return starts.every((a, i) => starts.every((b, j) => j <= i || !intersects(a.set, b.set)))
}

const children = (node: AST.Node): ReadonlyArray<AST.Node> =>
  node.type === "Quantifier"
    ? [node.element]
    : node.type === "Alternative"
    ? node.elements
    : isDisjunction(node)
    ? node.alternatives
    : []

const repeatsVariably = memo((node): boolean =>
  children(node).some((c) => (c.type === "Quantifier" && c.min !== c.max) || repeatsVariably(c))
)

const choosesAmbiguously = memo((node): boolean =>
  children(node).some((c) => (isDisjunction(c) && !deterministic(c)) || choosesAmbiguously(c))
)

/** Deepest group nesting and largest product of repetition counts allowed in a route regex. */
const maxDepth = 40
const maxUnrolled = 10_000

/** An estimate of the backtracking steps a node may take per start position on `textLimit` characters. */
const cost = (node: AST.Node): number => {
  switch (node.type) {
    case "Quantifier":
      return Math.min(node.max - node.min + 1, textLimit) * cost(node.element)
    case "Alternative":
      return node.elements.reduce((total, element) => total * cost(element), 1)
    case "Pattern":
    case "Group":
    case "CapturingGroup":
    case "Assertion": {
      if (!isDisjunction(node)) return 1
      const costs = node.alternatives.map(cost)
      return deterministic(node) ? Math.max(...costs) : costs.reduce((a, b) => a + b, 0)
    }
    default:
      return 1
  }
}

const anchored = (pattern: AST.Pattern) =>
  pattern.alternatives.every((a) => {
    const head = a.elements[0]
    return head !== undefined && head.type === "Assertion" && head.kind === "start"
  })

/**
 * Why a regex (already known to compile with `flags`) could take too long on a hostile message,
 * or undefined when its backtracking stays bounded on `textLimit` characters.
 */
export const hazard = (source: string): string | undefined => {
  try {
    return check(source)
  } catch (e) {
    if (e instanceof RangeError) return "it is nested too deeply"
    throw e
  }
}

const quote = (raw: string) => raw.length > 40 ? `${raw.slice(0, 37)}...` : raw

const check = (source: string): string | undefined => {
  let pattern: AST.Pattern
  try {
    pattern = new RegExpParser().parsePattern(source, 0, source.length, { unicode: true })
  } catch (e) {
    return `it does not parse: ${(e as Error).message}`
  }
  const stack: Array<{ readonly node: AST.Node; readonly depth: number; readonly repeats: number }> = [
    { node: pattern, depth: 0, repeats: 1 }
  ]
  while (stack.length > 0) {
    const { depth, node, repeats } = stack.pop()!
    if (depth > maxDepth) return "it is nested too deeply"
    if (node.type === "Backreference") return "backreferences (\\1, \\k<name>) are not allowed"
    const times = node.type === "Quantifier" ? repeats * Math.max(node.min, Math.min(node.max, textLimit)) : repeats
    if (times > maxUnrolled) return `${quote(node.raw)} repeats too many times in all`
    if (node.type === "Quantifier" && node.max > 1) {
      if (repeatsVariably(node)) {
        return `${quote(node.raw)} repeats something that is itself repeated (nested quantifiers)`
      }
      if (choosesAmbiguously(node)) {
        return `${quote(node.raw)} repeats alternatives that can start with the same character or be empty`
      }
    }
    const nested = node.type === "Alternative" ? depth : depth + 1
    for (const child of children(node)) stack.push({ node: child, depth: nested, repeats: times })
  }
  const total = (anchored(pattern) ? 1 : textLimit) * cost(pattern)
  if (total > costLimit) {
    return "it can backtrack too much on a long message (use one *, + or {n,}, or two after a leading ^)"
  }
  return undefined
}
