// ESLint 9 flat config for the whole workspace: `pnpm lint` (eslint .) at the root.
// typescript-eslint's recommended rules with type information (projectService reads each file's tsconfig).
import js from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/coverage/**", "**/data/**", "packages/console/src/api/schema.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname }
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      eqeqeq: ["error", "always"],
      // `_`-prefixed names are deliberately unused (ignored parameters, `infer _X`, `{ omitted: _, ...rest }`).
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true
      }],
      // Effect's error classes take their fields as a type argument: `Data.TaggedError("X")<{}>` is the idiom for none.
      "@typescript-eslint/no-empty-object-type": ["error", { allowObjectTypes: "always" }],
      // `async` without `await` is used on purpose: it turns a throw into a rejection and fits Promise-typed slots.
      "@typescript-eslint/require-await": "off"
    }
  },
  {
    // Library code talks to users only through Effect (logs, errors); the server's CLI may print.
    files: ["packages/*/src/**/*.ts"],
    ignores: ["packages/server/src/bin.ts"],
    rules: { "no-console": "error" }
  },
  {
    // Raw better-sqlite3 and pg rows and Kysely<any> migrations (as Kysely recommends: a migration must not
    // depend on today's schema types) are untyped by design.
    files: ["packages/sqlite/src/**/*.ts", "packages/sql/src/**/*.ts", "packages/postgres/src/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off"
    }
  },
  {
    // Tests (and the testing package's helpers) read JSON answers as `any` on purpose: assertions check the shape.
    files: ["**/test/**/*.ts", "packages/testing/src/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off"
    }
  },
  {
    // Config files are in no tsconfig project: lint them without type information.
    files: ["**/*.config.ts", "**/*.config.mjs", "**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked
  }
)
