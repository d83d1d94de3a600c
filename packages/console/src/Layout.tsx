import { Link, Navigate, Outlet, useLocation } from "@tanstack/react-router"
import type { ReactNode } from "react"
import { ApiFailure } from "./api/client"
import { languages, type Language, useLanguage } from "./i18n"
import { isAdmin, useSession, useSignOut } from "./session"
import { useCommonTexts } from "./texts"
import { useTheme } from "./theme"
import { ErrorAlert } from "./ui/Alert"

/** `Language`: a combobox of the console's languages; the choice is remembered. */
export const LanguageSelect = () => {
  const texts = useCommonTexts()
  const { language, setLanguage } = useLanguage()
  return (
    <label className="language">
      <span className="visually-hidden">{texts.language}</span>
      <select aria-label={texts.language} value={language} onChange={(e) => setLanguage(e.target.value as Language)}>
        {languages.map((l) => <option key={l.code} value={l.code} lang={l.code}>{l.name}</option>)}
      </select>
    </label>
  )
}

/** `Toggle theme`: pressed when dark; the choice is remembered. */
export const ThemeToggle = () => {
  const texts = useCommonTexts()
  const { theme, toggle } = useTheme()
  return (
    <button type="button" className="icon-button" aria-pressed={theme === "dark"} onClick={toggle} title={texts.toggleTheme}>
      <span aria-hidden="true">{theme === "dark" ? "☾" : "☀"}</span>
      <span className="visually-hidden">{texts.toggleTheme}</span>
    </button>
  )
}

const NavLink = ({ to, children }: { readonly to: string; readonly children: ReactNode }) => (
  <li>
    <Link to={to} activeProps={{ "aria-current": "page", className: "active" }}>{children}</Link>
  </li>
)

/** The frame of every signed-in page: navigation `Main`, language, theme, `Sign out`; signs out to /sign-in. */
export const Layout = () => {
  const texts = useCommonTexts()
  const session = useSession()
  const signOut = useSignOut()
  const location = useLocation()
  if (session.error instanceof ApiFailure && session.error.status === 401 || signOut.isSuccess) {
    if (location.pathname === "/sign-in") return null
    const next = location.href === "/" || signOut.isSuccess ? undefined : location.href
    return <Navigate to="/sign-in" search={next === undefined ? {} : { next }} replace />
  }
  if (session.data === undefined) {
    return (
      <main id="main" className="page-center">
        {session.error === null ? <p>{texts.loading}</p> : <ErrorAlert error={session.error} />}
      </main>
    )
  }
  const admin = isAdmin(session.data)
  return (
    <div className="app">
      <a
        className="skip-link"
        href="#main"
        onClick={(e) => {
          // with <base href>, "#main" would load the base page: move the focus instead
          e.preventDefault()
          document.getElementById("main")?.focus()
        }}
      >
        {texts.skipToContent}
      </a>
      <header className="topbar">
        <span className="brand">Botrelay</span>
        <nav aria-label={texts.main} className="main-nav">
          <ul>
            <NavLink to="/chats">{texts.chats}</NavLink>
            <NavLink to="/bots">{texts.bots}</NavLink>
            {admin ? <NavLink to="/routes">{texts.routes}</NavLink> : null}
            <NavLink to="/deliveries">{texts.deliveries}</NavLink>
            {admin ? <NavLink to="/keys">{texts.keys}</NavLink> : null}
            {admin ? <NavLink to="/accounts">{texts.accounts}</NavLink> : null}
            {admin ? <NavLink to="/audit">{texts.audit}</NavLink> : null}
            {admin ? <NavLink to="/status">{texts.status}</NavLink> : null}
            {admin ? <NavLink to="/settings">{texts.settings}</NavLink> : null}
          </ul>
        </nav>
        <div className="tools">
          <span className="who" title={texts.signedInAs(session.data.display_name || session.data.username)}>
            {session.data.display_name || session.data.username}
          </span>
          <LanguageSelect />
          <ThemeToggle />
          <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>{texts.signOut}</button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  )
}

/** A page only admins use; operators are sent to the chats. */
export const AdminOnly = ({ children }: { readonly children: ReactNode }) => {
  const session = useSession()
  if (session.data !== undefined && !isAdmin(session.data)) return <Navigate to="/chats" replace />
  return <>{children}</>
}
