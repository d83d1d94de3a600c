import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { type Account, api, ApiFailure, setCsrfToken, unwrap } from "./api/client"

export const sessionKey = ["session"] as const

/** The signed-in account (undefined while loading; a 401 ApiFailure when signed out). */
export const useSession = () =>
  useQuery({
    queryKey: sessionKey,
    queryFn: async () => {
      const session = await unwrap(api.GET("/api/auth/me"))
      setCsrfToken(session.csrf_token)
      return session.account
    },
    retry: (count, error) => !(error instanceof ApiFailure && error.status === 401) && count < 2,
    staleTime: 60_000
  })

/** The signed-in account; only for pages inside the signed-in layout. */
export const useAccount = (): Account => {
  const { data } = useSession()
  if (data === undefined) throw new Error("useAccount outside the signed-in layout")
  return data
}

export const isAdmin = (account: Account) => account.role === "admin"

export const useSignIn = () => {
  const client = useQueryClient()
  return useMutation({
    mutationFn: async (body: { readonly username: string; readonly password: string }) => {
      const session = await unwrap(api.POST("/api/auth/login", { body }))
      setCsrfToken(session.csrf_token)
      return session.account
    },
    onSuccess: (account) => {
      client.removeQueries()
      client.setQueryData(sessionKey, account)
    }
  })
}

export const useSignOut = () => {
  const client = useQueryClient()
  return useMutation({
    mutationFn: () => unwrap(api.POST("/api/auth/logout")),
    onSettled: () => {
      setCsrfToken(undefined)
      client.removeQueries()
    }
  })
}
