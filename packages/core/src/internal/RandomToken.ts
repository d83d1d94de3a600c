import { Effect } from "effect"

/** Bytes as base64url without padding. */
export const base64url = (bytes: Uint8Array): string => {
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

/** 32 random bytes from Web Crypto, base64url-encoded: 43 characters of `A-Z a-z 0-9 _ -`. */
export const make: Effect.Effect<string> = Effect.sync(() => base64url(crypto.getRandomValues(new Uint8Array(32))))
