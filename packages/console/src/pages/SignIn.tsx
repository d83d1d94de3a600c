import { Navigate, useNavigate, useSearch } from "@tanstack/react-router"
import { useState } from "react"
import { defineTexts } from "../i18n"
import { LanguageSelect, ThemeToggle } from "../Layout"
import { useSession, useSignIn } from "../session"
import { ErrorAlert } from "../ui/Alert"
import { TextField } from "../ui/Field"

const useTexts = defineTexts({
  title: "Sign in to Botrelay",
  username: "Username",
  password: "Password",
  signIn: "Sign in",
  signingIn: "Signing in…"
}, {
  title: "Вход в Botrelay",
  username: "Имя пользователя",
  password: "Пароль",
  signIn: "Войти",
  signingIn: "Вход…"
})

/** Only paths inside the console are followed after sign-in. */
const safeNext = (next: string | undefined) =>
  next !== undefined && next.startsWith("/") && !next.startsWith("//") ? next : "/chats"

/** `/sign-in`: `Username`, `Password`, `Sign in`; the API's refusal in a `role=alert`. */
export const SignIn = () => {
  const texts = useTexts()
  const { next } = useSearch({ from: "/sign-in" })
  const navigate = useNavigate()
  const session = useSession()
  const signIn = useSignIn()
  const [username, setUsername] = useState("")
  const [password, setPassword] = useState("")
  if (session.data !== undefined) return <Navigate to={safeNext(next)} replace />
  return (
    <main id="main" className="sign-in">
      <div className="sign-in-tools">
        <LanguageSelect />
        <ThemeToggle />
      </div>
      <form
        className="card sign-in-card"
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          signIn.mutate({ username, password }, {
            onSuccess: () => void navigate({ to: safeNext(next), replace: true })
          })
        }}
      >
        <h1>{texts.title}</h1>
        <TextField
          label={texts.username}
          name="username"
          autoComplete="username"
          autoFocus
          value={username}
          onChange={(e) => setUsername(e.target.value)}
        />
        <TextField
          label={texts.password}
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <ErrorAlert error={signIn.error} />
        <button type="submit" className="primary" disabled={signIn.isPending}>
          {signIn.isPending ? texts.signingIn : texts.signIn}
        </button>
      </form>
    </main>
  )
}
