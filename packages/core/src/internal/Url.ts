/** Whether the text is an absolute http or https URL with a host. */
export const isHttpUrl = (value: string): boolean => {
  if (!URL.canParse(value)) return false
  const url = new URL(value)
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== ""
}

/** A URL without its `user:password@` part; other text as it is. */
export const withoutCredentials = (url: string): string => {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  if (parsed.username === "" && parsed.password === "") return url
  parsed.username = ""
  parsed.password = ""
  return parsed.href
}
