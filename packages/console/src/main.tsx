import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { RouterProvider } from "@tanstack/react-router"
import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { ApiFailure } from "./api/client"
import { LanguageProvider } from "./i18n"
import { router } from "./router"
import { sessionKey } from "./session"
import { ThemeProvider } from "./theme"
import "./styles.css"

/** A 401 from any other call means the session ended: asking for it again lets the frame send the person to sign in. */
const signedOutOn = (error: unknown, key?: ReadonlyArray<unknown>) => {
  if (key?.[0] === sessionKey[0]) return
  if (error instanceof ApiFailure && error.status === 401 && error.code !== "invalid_credentials") {
    void queryClient.invalidateQueries({ queryKey: sessionKey })
  }
}

const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({ onError: (error, query) => signedOutOn(error, query.queryKey) }),
  mutationCache: new MutationCache({ onError: (error) => signedOutOn(error) }),
  defaultOptions: {
    queries: {
      retry: (count, error) => !(error instanceof ApiFailure && error.status >= 400 && error.status < 500) && count < 2,
      refetchOnWindowFocus: false
    }
  }
})

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <LanguageProvider>
        <ThemeProvider>
          <RouterProvider router={router} />
        </ThemeProvider>
      </LanguageProvider>
    </QueryClientProvider>
  </StrictMode>
)
