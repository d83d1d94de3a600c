/** Polls `check` every 25 ms until it returns a value, or fails after `timeout` ms. */
export const eventually = async <A>(check: () => Promise<A | undefined> | A | undefined, timeout = 5000): Promise<A> => {
  const deadline = Date.now() + timeout
  while (true) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
