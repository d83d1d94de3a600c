/**
 * The demo's photos, drawn in code: small baseline JPEGs whose 8×8 blocks are each one colour (a
 * block's DCT has only its DC coefficient), so the encoder needs no transform and two tiny Huffman
 * tables, and any JPEG decoder shows them. Nothing is read from disk or the network.
 */

/** An RGB colour, each channel 0..255. */
export type Rgb = readonly [number, number, number]

/** A picture of `columns` × `rows` blocks of 8×8 pixels, each block one colour. */
export interface Mosaic {
  readonly columns: number
  readonly rows: number
  readonly colour: (x: number, y: number) => Rgb
}

/** A JPEG file and its size in pixels. */
export interface Picture {
  readonly bytes: Uint8Array
  readonly width: number
  readonly height: number
}

/** Big-endian bytes of a 16-bit number. */
const u16 = (n: number) => [(n >> 8) & 0xff, n & 0xff]

/** A marker segment: the marker, its length (counting itself) and its payload. */
const segment = (marker: number, payload: ReadonlyArray<number>) => [0xff, marker, ...u16(payload.length + 2), ...payload]

/** The entropy-coded data as bits, 0xFF bytes stuffed with 0x00, the last byte padded with ones. */
class BitWriter {
  readonly bytes: Array<number> = []
  private current = 0
  private used = 0
  write(value: number, length: number) {
    for (let i = length - 1; i >= 0; i--) {
      this.current = (this.current << 1) | ((value >> i) & 1)
      if (++this.used === 8) this.flushByte()
    }
  }
  finish() {
    while (this.used !== 0) this.write(1, 1)
  }
  private flushByte() {
    this.bytes.push(this.current)
    if (this.current === 0xff) this.bytes.push(0)
    this.current = 0
    this.used = 0
  }
}

/**
 * The one quantiser step, for every coefficient: a flat block of level-shifted value s has the DC
 * coefficient 8·s, so a step of 8 codes s exactly.
 */
const step = 8

/** DC table: the twelve difference categories, each a 4-bit code equal to the category. */
const dcTable = [0x00, ...Array.from({ length: 16 }, (_, i) => (i === 3 ? 12 : 0)), ...Array.from({ length: 12 }, (_, i) => i)]

/** AC table: only end-of-block (symbol 0x00), a 1-bit code "0". */
const acTable = [0x10, 1, ...Array.from({ length: 15 }, () => 0), 0x00]

const clampByte = (n: number) => Math.min(255, Math.max(0, Math.round(n)))

/** The level-shifted Y, Cb and Cr of a colour (JFIF's conversion). */
const ycbcr = ([r, g, b]: Rgb): readonly [number, number, number] => [
  clampByte(0.299 * r + 0.587 * g + 0.114 * b) - 128,
  clampByte(-0.168736 * r - 0.331264 * g + 0.5 * b + 128) - 128,
  clampByte(0.5 * r - 0.418688 * g - 0.081312 * b + 128) - 128
]

/** Writes a DC difference: its category's code, then the category's bits of the value. */
const writeDc = (bits: BitWriter, difference: number) => {
  const magnitude = Math.abs(difference)
  const category = magnitude === 0 ? 0 : 32 - Math.clz32(magnitude)
  bits.write(category, 4)
  if (category > 0) bits.write(difference >= 0 ? difference : difference + (1 << category) - 1, category)
}

/** Encodes the mosaic as a baseline JFIF JPEG, three components without subsampling. */
export const encode = (mosaic: Mosaic): Picture => {
  const width = mosaic.columns * 8
  const height = mosaic.rows * 8
  const bits = new BitWriter()
  const previous = [0, 0, 0]
  for (let y = 0; y < mosaic.rows; y++) {
    for (let x = 0; x < mosaic.columns; x++) {
      const components = ycbcr(mosaic.colour(x, y))
      for (let c = 0; c < 3; c++) {
        const dc = Math.round((components[c]! * 8) / step)
        writeDc(bits, dc - previous[c]!)
        previous[c] = dc
        bits.write(0, 1)
      }
    }
  }
  bits.finish()
  const bytes = [
    0xff, 0xd8,
    ...segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, ...u16(1), ...u16(1), 0, 0]),
    ...segment(0xdb, [0x00, ...Array.from({ length: 64 }, () => step)]),
    ...segment(0xc0, [8, ...u16(height), ...u16(width), 3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0]),
    ...segment(0xc4, [...dcTable, ...acTable]),
    ...segment(0xda, [3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 63, 0]),
    ...bits.bytes,
    0xff, 0xd9
  ]
  return { bytes: Uint8Array.from(bytes), width, height }
}

/** What a simulated person photographs. */
export type Subject = "parcel" | "receipt" | "screenshot" | "item" | "view"

const mix = (a: Rgb, b: Rgb, t: number): Rgb => [
  a[0] + (b[0] - a[0]) * t,
  a[1] + (b[1] - a[1]) * t,
  a[2] + (b[2] - a[2]) * t
]

const inside = (x: number, y: number, left: number, top: number, right: number, bottom: number) =>
  x >= left && x < right && y >= top && y < bottom

const columns = 40
const rows = 30

/** The subjects, drawn on a 40 × 30 block grid (320 × 240 pixels); `variant` shifts colours and places. */
const scenes: Readonly<Record<Subject, (variant: number) => Mosaic["colour"]>> = {
  parcel: (variant) => (x, y) => {
    const table: Rgb = mix([196, 160, 120], [150, 110, 80], y / rows)
    const shift = variant % 5
    if (inside(x, y, 9 + shift, 7, 31 + shift, 25)) {
      if (inside(x, y, 19 + shift, 7, 21 + shift, 25)) return [214, 196, 150]
      if ((x - 24 - shift) ** 2 + (y - 19) ** 2 < 7) return [90, 62, 40]
      return mix([181, 132, 82], [160, 112, 66], (x - 9 - shift) / 22)
    }
    if (inside(x, y, 11 + shift, 25, 33 + shift, 26)) return [120, 92, 66]
    return table
  },
  receipt: (variant) => (x, y) => {
    if (inside(x, y, 12, 2, 28, 28)) {
      if (y === 4) return [60, 60, 60]
      if (y >= 7 && y <= 23 && y % 2 === 1 && x >= 14 && x < 26 - ((y + variant) % 4) * 2) return [150, 150, 150]
      if (y === 25 && x >= 18 && x < 26) return [40, 40, 40]
      return [250, 250, 246]
    }
    return mix([70, 90, 110], [40, 55, 70], y / rows)
  },
  screenshot: (variant) => (x, y) => {
    const accent: Rgb = variant % 2 === 0 ? [52, 120, 246] : [38, 166, 154]
    if (y < 3) return accent
    if (inside(x, y, 6, 11, 8, 12)) return [217, 48, 37]
    if (inside(x, y, 10, 11, 30, 12)) return [120, 40, 36]
    if (inside(x, y, 4, 9, 36, 14)) return inside(x, y, 5, 10, 35, 13) ? [253, 236, 234] : [217, 48, 37]
    if (inside(x, y, 13, 20, 27, 24)) return accent
    if (inside(x, y, 4, 16, 36, 17)) return [220, 220, 220]
    return [255, 255, 255]
  },
  item: (variant) => (x, y) => {
    const colours: ReadonlyArray<Rgb> = [[200, 40, 60], [40, 90, 170], [240, 180, 40], [60, 150, 90]]
    const body = colours[variant % colours.length]!
    if (inside(x, y, 13, 8, 27, 24)) return mix(body, [0, 0, 0], (x - 13) / 40)
    if (inside(x, y, 27, 11, 31, 20) && !inside(x, y, 27, 13, 29, 18)) return mix(body, [0, 0, 0], 0.3)
    if (inside(x, y, 10, 24, 32, 25)) return [190, 190, 196]
    return mix([245, 243, 238], [225, 222, 215], y / rows)
  },
  view: (variant) => (x, y) => {
    const sun = { x: 8 + (variant % 5) * 5, y: 7 }
    if ((x - sun.x) ** 2 + (y - sun.y) ** 2 <= 9) return [255, 214, 92]
    const hill = 19 + Math.round(3 * Math.sin((x + variant) / 5))
    if (y >= hill) return mix([86, 160, 72], [40, 100, 45], (y - hill) / (rows - hill))
    return mix([120, 180, 240], [200, 225, 250], y / hill)
  }
}

/** A photo of the subject, 320 × 240 pixels, about 5 KB. */
export const photo = (subject: Subject, variant = 0): Picture =>
  encode({ columns, rows, colour: scenes[subject](variant) })
