import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from "react"

export type Theme = "light" | "dark"

const storageKey = "botrelay.theme"

const ThemeContext = createContext<{ readonly theme: Theme; readonly toggle: () => void }>({
  theme: "light",
  toggle: () => {}
})

/** Holds the theme (the system's until the person chooses), remembers it, and sets `<html data-theme>`. */
export const ThemeProvider = ({ children }: { readonly children: ReactNode }) => {
  const [theme, set] = useState<Theme>(() => document.documentElement.dataset.theme === "dark" ? "dark" : "light")
  const toggle = useCallback(() => {
    set((current) => {
      const next = current === "dark" ? "light" : "dark"
      document.documentElement.dataset.theme = next
      try {
        localStorage.setItem(storageKey, next)
      } catch {
        // a browser without storage forgets the choice on reload
      }
      return next
    })
  }, [])
  const value = useMemo(() => ({ theme, toggle }), [theme, toggle])
  return <ThemeContext.Provider value={value}>{children}</ThemeContext.Provider>
}

export const useTheme = () => useContext(ThemeContext)
