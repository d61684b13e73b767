import { useState } from "preact/hooks";

/** Where a paged list stands: the NextTokens of the pages before this one, and this one's ("" for the first). */
export function usePageTokens() {
  const [tokens, setTokens] = useState<readonly string[]>([""]);
  return {
    token: tokens[tokens.length - 1] ?? "",
    hasPrevious: tokens.length > 1,
    previous: () => setTokens(tokens.slice(0, -1)),
    next: (token: string) => setTokens([...tokens, token]),
    first: () => setTokens([""]),
  };
}

/** Previous and next page of a list read through the API's NextToken (empty: this is the last page). */
export function Pager(props: { readonly pages: ReturnType<typeof usePageTokens>; readonly nextToken: string }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="secondary" disabled={!props.pages.hasPrevious} onClick={props.pages.previous}>
        Previous page
      </button>
      <button
        type="button"
        class="secondary"
        disabled={props.nextToken === ""}
        onClick={() => props.pages.next(props.nextToken)}
      >
        Next page
      </button>
    </nav>
  );
}
