import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from "react"

/** The console's languages; English is the default. */
export type Language = "en" | "ru"

export const languages: ReadonlyArray<{ readonly code: Language; readonly name: string }> = [
  { code: "en", name: "English" },
  { code: "ru", name: "Русский" }
]

const storageKey = "botrelay.language"

const remembered = (): Language => {
  try {
    return localStorage.getItem(storageKey) === "ru" ? "ru" : "en"
  } catch {
    return "en"
  }
}

const LanguageContext = createContext<{ readonly language: Language; readonly setLanguage: (l: Language) => void }>({
  language: "en",
  setLanguage: () => {}
})

/** Holds the chosen language, remembers it, and sets `<html lang>`. */
export const LanguageProvider = ({ children }: { readonly children: ReactNode }) => {
  const [language, set] = useState<Language>(remembered)
  useEffect(() => {
    document.documentElement.lang = language
  }, [language])
  const setLanguage = useCallback((l: Language) => {
    try {
      localStorage.setItem(storageKey, l)
    } catch {
      // a browser without storage forgets the choice on reload
    }
    set(l)
  }, [])
  const value = useMemo(() => ({ language, setLanguage }), [language, setLanguage])
  return <LanguageContext.Provider value={value}>{children}</LanguageContext.Provider>
}

export const useLanguage = () => useContext(LanguageContext)

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Texts = Record<string, string | ((...args: Array<any>) => string)>

/**
 * A module's texts in both languages (Russian must have every English key, of the same kind);
 * returns the hook that picks the current language's.
 */
export const defineTexts = <T extends Texts>(en: T, ru: { readonly [K in keyof T]: T[K] }) => (): T => {
  const { language } = useLanguage()
  return language === "ru" ? ru : en
}

/** A date and time in the current language, e.g. for message and audit times. */
export const useFormatTime = () => {
  const { language } = useLanguage()
  return useMemo(() => {
    const format = new Intl.DateTimeFormat(language === "ru" ? "ru-RU" : "en-GB", {
      dateStyle: "short",
      timeStyle: "short"
    })
    return (value: string | number | Date) => format.format(typeof value === "number" ? value * 1000 : new Date(value))
  }, [language])
}
