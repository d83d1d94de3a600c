import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto"
import { chmodSync, closeSync, existsSync, openSync, readFileSync, statSync, writeSync } from "node:fs"
import { dirname, join } from "node:path"
import { Data, Redacted } from "effect"

/** A 256-bit key that encrypts Botrelay's secrets at rest. */
export type SecretKey = Redacted.Redacted<Uint8Array>

/** Why secrets cannot be read or written; the message never holds a key or a secret. */
export class SecretKeyError extends Data.TaggedError("SecretKeyError")<{
  readonly reason: "invalid" | "file" | "mismatch" | "corrupt"
  readonly detail: string
}> {
  override get message() {
    return this.detail
  }
}

/** The name of the key file Botrelay generates beside the database (and `admin.key`). */
export const keyFileName = "secret.key"

/** Where the key file of a database file lives: `<data dir>/secret.key`. */
export const keyFileFor = (database: string): string => join(dirname(database), keyFileName)

const hexKey = /^[0-9a-fA-F]{64}$/

/** A key from 64 hexadecimal characters; undefined when `hex` is not that. */
export const fromHex = (hex: string): SecretKey | undefined =>
  hexKey.test(hex) ? Redacted.make(new Uint8Array(Buffer.from(hex, "hex"))) : undefined

/** The key as 64 hexadecimal characters, for a key file or `BOTRELAY_SECRET_KEY`. */
export const toHex = (key: SecretKey): string => Buffer.from(Redacted.value(key)).toString("hex")

/** A new random key. */
export const generate = (): SecretKey => Redacted.make(new Uint8Array(randomBytes(32)))

/** Writes a key file that must not exist yet, mode 0600. */
export const writeFile = (path: string, key: SecretKey): void => {
  const fd = openSync(path, "wx", 0o600)
  try {
    writeSync(fd, `${toHex(key)}\n`)
  } finally {
    closeSync(fd)
  }
  chmodSync(path, 0o600)
}

/** Reads a key file, tightening its mode to 0600 when it is wider. */
export const readFile = (path: string): SecretKey => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600)
  } catch (cause) {
    throw new SecretKeyError({
      reason: "file",
      detail: `cannot read the secret key file ${path}: ${(cause as NodeJS.ErrnoException).code ?? "error"}`
    })
  }
  const key = fromHex(text.trim())
  if (key === undefined) {
    throw new SecretKeyError({
      reason: "invalid",
      detail: `the secret key file ${path} must hold 64 hexadecimal characters`
    })
  }
  return key
}

/** The key in `path`; on first start (no file) a new key, written there with mode 0600. */
export const readOrCreateFile = (path: string): SecretKey => {
  if (existsSync(path)) return readFile(path)
  const key = generate()
  try {
    writeFile(path, key)
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "EEXIST") return readFile(path)
    throw new SecretKeyError({
      reason: "file",
      detail: `cannot write the secret key file ${path}: ${(cause as NodeJS.ErrnoException).code ?? "error"}`
    })
  }
  return key
}

/** What a stored secret is for; it is bound to the ciphertext, so a secret cannot be moved to another use. */
export type Purpose = "token" | "secret_token" | "signing_secret" | "webhook_secret" | "setting" | "check"

const version = "v1:"
const ivLength = 12
const tagLength = 16

/** Encrypts and decrypts stored secrets (AES-256-GCM) and hashes tokens for lookups (HMAC-SHA256). */
export interface Cipher {
  /** `v1:` and base64url of IV, ciphertext and tag; "" stays "". */
  readonly encrypt: (purpose: Purpose, plaintext: string) => string
  /** The plaintext of `encrypt`'s output; throws `SecretKeyError` when this key did not write it. */
  readonly decrypt: (purpose: Purpose, stored: string) => string
  /** A keyed hash of a token, hex: equal tokens hash alike, so lookups stay indexed. */
  readonly tokenHash: (token: string) => string
}

/** The most decrypted values a cipher remembers, so hot reads decrypt once. */
const cacheSize = 4096

const derive = (key: SecretKey, info: string): Buffer =>
  Buffer.from(hkdfSync("sha256", Redacted.value(key), Buffer.alloc(0), `botrelay ${info}`, 32))

/** A cipher with keys derived (HKDF-SHA256) from `key`: one to encrypt, one to hash tokens. */
export const cipher = (key: SecretKey): Cipher => {
  const encryptionKey = derive(key, "secrets v1")
  const hashKey = derive(key, "token index v1")
  const cache = new Map<string, string>()
  return {
    encrypt: (purpose, plaintext) => {
      if (plaintext === "") return ""
      const iv = randomBytes(ivLength)
      const c = createCipheriv("aes-256-gcm", encryptionKey, iv)
      c.setAAD(Buffer.from(purpose))
      const body = Buffer.concat([c.update(plaintext, "utf8"), c.final()])
      return version + Buffer.concat([iv, body, c.getAuthTag()]).toString("base64url")
    },
    decrypt: (purpose, stored) => {
      if (stored === "") return ""
      const cacheKey = `${purpose}\u0000${stored}`
      const cached = cache.get(cacheKey)
      if (cached !== undefined) return cached
      if (!stored.startsWith(version)) {
        throw new SecretKeyError({ reason: "corrupt", detail: "a stored secret is not encrypted in a known format" })
      }
      const bytes = Buffer.from(stored.slice(version.length), "base64url")
      if (bytes.length < ivLength + tagLength) {
        throw new SecretKeyError({ reason: "corrupt", detail: "a stored secret is truncated" })
      }
      let plaintext: string
      try {
        const d = createDecipheriv("aes-256-gcm", encryptionKey, bytes.subarray(0, ivLength))
        d.setAAD(Buffer.from(purpose))
        d.setAuthTag(bytes.subarray(bytes.length - tagLength))
        plaintext = Buffer.concat([d.update(bytes.subarray(ivLength, bytes.length - tagLength)), d.final()])
          .toString("utf8")
      } catch {
        throw new SecretKeyError({
          reason: "mismatch",
          detail: "a stored secret does not decrypt with this secret key"
        })
      }
      if (cache.size >= cacheSize) cache.clear()
      cache.set(cacheKey, plaintext)
      return plaintext
    },
    tokenHash: (token) => createHmac("sha256", hashKey).update(token, "utf8").digest("hex")
  }
}

/** The plaintext of the check value each database keeps, encrypted, to tell whether a key is its key. */
export const checkPlaintext = "botrelay secret key check"
