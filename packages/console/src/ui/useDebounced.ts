import { useEffect, useState } from "react"

/** `value`, once it has not changed for `ms` (search boxes ask the API when typing stops). */
export const useDebounced = <T>(value: T, ms: number): T => {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms)
    return () => clearTimeout(timer)
  }, [value, ms])
  return settled
}
